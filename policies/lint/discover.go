package lint

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// Found is one deployment to lint: the directory its default sources are
// read from, and its mcpc.cue ("" when it has none and is recognised by
// its host's files).
type Found struct {
	Dir  string
	File string
}

// Name is how a report names f: its mcpc.cue, else its directory.
func (f Found) Name() string {
	if f.File != "" {
		return f.File
	}
	return f.Dir
}

// Skipped says whether a directory below the one being searched holds no
// deployment of the repository's own: hidden directories (.git, .venv; an
// agent's .volcanic/agent is found from its deployment's directory),
// dependencies (node_modules, vendor) and test inputs (testdata), as
// `go ./...` skips them.
func Skipped(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor" || name == "testdata"
}

// Of is the deployment of dir: its own mcpc.cue; else the deployment its
// host's files make (Recognise) unless an mcpc.cue above reads one of
// them; else the mcpc.cue found upward (Find). False when there is none.
func Of(dir string) (Found, bool) {
	if file := filepath.Join(dir, FileName); isFile(file) {
		return Found{Dir: dir, File: file}, true
	}
	if files, ok := Recognise(dir); ok && !readByAny(files, upwardReads(filepath.Dir(absPath(dir)))) {
		return Found{Dir: dir}, true
	}
	if file := Find(dir); file != "" {
		return Found{Dir: dir, File: file}, true
	}
	return Found{}, false
}

// Discover finds root's deployment (Of) and every deployment below it: each
// mcpc.cue, and each directory its host's files make a deployment
// (Recognise) that no mcpc.cue found reads any of (one that names a file of
// a directory claims that directory). Skipped directories are not entered.
// The order is the directories' (lexical, a parent before its children).
func Discover(root string) ([]Found, error) {
	var cues, recognised []Found
	recognisedFiles := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			return nil
		}
		if path != root && Skipped(e.Name()) {
			return filepath.SkipDir
		}
		if file := filepath.Join(path, FileName); isFile(file) {
			cues = append(cues, Found{Dir: path, File: file})
		} else if files, ok := Recognise(path); ok {
			recognised = append(recognised, Found{Dir: path})
			recognisedFiles[path] = files
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	read := upwardReads(filepath.Dir(absPath(root)))
	for _, f := range cues {
		read = append(read, FilesRead(f)...)
	}
	out := cues
	for _, f := range recognised {
		if !readByAny(recognisedFiles[f.Dir], read) {
			out = append(out, f)
		}
	}
	if own, ok := Of(root); ok && own.File != filepath.Join(root, FileName) && !contains(out, own) {
		out = append(out, own)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// Containing are the deployments found below root (Discover) that read one
// of files (its mcpc.cue, a source, the deny-list, the tool lock, a file of
// a policy pack's directory), for a pre-commit hook given the changed
// files. A file no deployment reads selects nothing.
func Containing(root string, files []string) ([]Found, error) {
	all, err := Discover(root)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, f := range files {
		changed = append(changed, absPath(f))
	}
	var out []Found
	for _, d := range all {
		reads := FilesRead(d)
		if d.File != "" {
			reads = append(reads, absPath(d.File))
		}
		if readByAny(changed, reads) {
			out = append(out, d)
		}
	}
	return out, nil
}

// FilesRead are the absolute paths of what linting f reads: its sources
// (those of mcpc.cue, else those the host reads in f.Dir), and mcpc.cue's
// deny-list, tool lock and policy pack directories (a directory stands for
// every file below it). A broken mcpc.cue reads everything below its
// directory: lint reports it, and which files it meant is not known.
func FilesRead(f Found) []string {
	var d *Deployment
	if f.File != "" {
		loaded, ds := Load(f.File)
		if len(ds) > 0 {
			return []string{absPath(filepath.Dir(f.File))}
		}
		d = loaded
	}
	opts, _ := CompileOptions(d, f.Dir, Flags{})
	var out []string
	add := func(p string) {
		if p != "" && p != "-" {
			out = append(out, absPath(p))
		}
	}
	for _, p := range opts.AppSettings {
		add(p)
	}
	for _, p := range opts.EnvFiles {
		add(p)
	}
	if opts.AgentDir != "" {
		add(filepath.Join(opts.AgentDir, "settings.json"))
	}
	add(opts.Config)
	if d != nil {
		add(d.Sources.DenyList)
		add(d.Target.Lock)
		for _, p := range d.Policies.Dirs {
			add(p)
		}
	}
	return out
}

// Recognisable says what makes a directory a deployment without mcpc.cue
// (Recognise).
const Recognisable = "an appsettings.json with an Mcp section, agent/settings.json with mcpServers, app/config/mcp_config.json"

// Recognise says whether dir holds a deployment without mcpc.cue: the
// sources lint reads there without one (CompileOptions) include a file
// that declares servers — an appsettings file with an Mcp section, an
// agent settings.json with mcpServers, a CraftBot mcp_config.json — and
// returns those sources. A file that does not parse counts: lint reports
// it rather than skip it.
func Recognise(dir string) ([]string, bool) {
	opts, err := CompileOptions(nil, dir, Flags{})
	if err != nil {
		return nil, false
	}
	var files []string
	found := false
	look := func(p, key string) {
		if p == "" || !isFile(p) {
			return
		}
		files = append(files, absPath(p))
		found = found || declares(p, key)
	}
	for _, p := range opts.AppSettings {
		look(p, "Mcp")
	}
	if opts.AgentDir != "" {
		look(filepath.Join(opts.AgentDir, "settings.json"), "mcpServers")
	}
	look(opts.Config, "")
	if !found {
		return nil, false
	}
	for _, p := range opts.EnvFiles {
		files = append(files, absPath(p))
	}
	return files, true
}

// declares: the JSON file has the top-level key (compared as .NET compares
// configuration keys, ignoring case); "" is any file.
func declares(file, key string) bool {
	if key == "" {
		return true
	}
	data, err := inputfile.ReadText(file)
	if err != nil {
		return true
	}
	root, d := node.ParseJSON(file, data, true)
	if d != nil {
		return true
	}
	for _, m := range root.Members {
		if strings.EqualFold(m.Key, key) {
			return true
		}
	}
	return false
}

// upwardReads are the files read by the mcpc.cue files in dir and its
// parents.
func upwardReads(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var out []string
	for {
		if file := filepath.Join(abs, FileName); isFile(file) {
			out = append(out, FilesRead(Found{Dir: abs, File: file})...)
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return out
		}
		abs = parent
	}
}

// readByAny: one of files is one of read, or below a directory of read.
func readByAny(files, read []string) bool {
	for _, f := range files {
		for _, r := range read {
			if f == r || strings.HasPrefix(f, r+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}

func contains(fs []Found, f Found) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}
