"""Compare what CraftBot's own code runs with what mcpc's craftbot profile says.

usage: compare.py --checkout DIR --mcpc BIN [--out DIR] [-v]

For every config case (cases/config/*.json, and the catalog the checkout
ships, app/config/mcp_config.json) the host's loader and client run on the
file (hostside.py) and mcpc plan/validate run on the same file; for every
tools case (cases/tools/*.json) both start fakeserver.py listing the case's
tools, and the host's adapter and registry are compared with mcpc tools.
Both sides are normalized to one shape (README.md) and compared field by
field. Exit status: 0 when everything matches, 1 on a mismatch, 2 when the
harness itself failed.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def compact(v, limit=160):
    s = json.dumps(v, sort_keys=True, ensure_ascii=False)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def host_side(mode, checkout, *paths):
    p = run([sys.executable, str(HERE / "hostside.py"), mode, str(checkout), *map(str, paths)])
    if p.returncode != 0:
        raise SystemExit(f"hostside.py {mode} {paths[0]} failed:\n{p.stderr}")
    return json.loads(p.stdout)


# ---- config cases ---------------------------------------------------------


def mcpc_config(mcpc, path, tmp):
    """mcpc's plan and validate of path, normalized like the host's side."""
    plan_file = Path(tmp) / "plan.json"
    if plan_file.exists():
        plan_file.unlink()
    common = ["--profile", "craftbot", "--config", str(path), "--target-os", "linux", "--format", "json"]
    p = run([mcpc, "plan", *common, "-o", str(plan_file)])
    v = run([mcpc, "validate", *common])
    try:
        diags = json.loads(v.stdout or "[]")
    except json.JSONDecodeError:
        diags = [{"unparsed": v.stdout}]
    errors = sorted({d.get("rule", "?") for d in diags if d.get("severity") == "error"})
    out = {"validateExit": v.returncode, "validateErrors": errors}
    if p.returncode != 0 or not plan_file.exists():
        out["load"] = "no server"
        return out
    plan = json.loads(plan_file.read_text(encoding="utf-8"))
    shadowed = plan.get("shadowed") or []
    servers = {}
    for s in plan.get("servers") or []:
        name = s.get("name")
        n = {
            "entries": 1 + sum(1 for x in shadowed if isinstance(x, dict) and x.get("name") == name),
            "enabled": bool(s.get("enabled")),
            "transport": s.get("transport"),
            "actionSet": s.get("actionSet"),
            "execs": not s.get("cannotStart"),
        }
        if s.get("cannotStart"):
            n["why"] = s["cannotStart"]
        if s.get("transport") == "stdio":
            n["command"], n["args"] = s.get("command"), s.get("args")
        else:
            n["url"] = s.get("url")
        servers[name] = n
    auto = bool(plan.get("autoConnect"))
    out.update({
        "load": "ok",
        "autoConnect": auto,
        "servers": servers,
        "connects": sorted(k for k, s in servers.items() if auto and s["enabled"]),
        "skipped": len(plan.get("skipped") or []),
    })
    return out


def host_config(checkout, path):
    h = host_side("config", checkout, path)
    if h["load"] != "ok":
        h["validateFails"] = True
        return h
    for s in h["servers"].values():
        s["execs"] = s.pop("starts")
    # The contract (HOSTFACTS29): an entry the host skips or cannot start
    # is an error when it is enabled; a file it loads nothing from is one.
    h["validateFails"] = h["skippedEnabled"] > 0 or any(
        s["enabled"] and not s["execs"] for s in h["servers"].values())
    return h


def compare_config(h, m):
    diffs = []

    def d(field, hv, mv):
        if hv != mv:
            diffs.append((field, hv, mv))

    d("load", h["load"], m["load"])
    d("validate fails", h["validateFails"], m["validateExit"] != 0)
    if h["load"] != "ok" or m["load"] != "ok":
        return diffs
    d("auto_connect", h["autoConnect"], m["autoConnect"])
    d("servers", sorted(h["servers"]), sorted(m["servers"]))
    d("connects", h["connects"], m["connects"])
    d("skipped", h["skipped"], m["skipped"])
    for name in sorted(set(h["servers"]) & set(m["servers"])):
        hs, ms = h["servers"][name], m["servers"][name]
        for f in ("entries", "enabled", "transport", "actionSet", "execs"):
            d(f"{name}.{f}", hs.get(f), ms.get(f))
        if hs["execs"] and ms["execs"] and hs["transport"] == "stdio":
            d(f"{name}.command", hs["exec"][0], ms.get("command"))
            d(f"{name}.args", hs["exec"][1], ms.get("args"))
        if hs["transport"] != "stdio":
            d(f"{name}.url", hs.get("url"), ms.get("url"))
    return diffs


# ---- tools cases ----------------------------------------------------------


def mcpc_fields(row):
    """An mcpc tools row's input schema as the host's map of fields."""
    if isinstance(row.get("inputSchema"), dict):
        return row["inputSchema"]
    out = {}
    for f in (row.get("input") or {}).get("fields") or []:
        g = {}
        for k in ("type", "description", "enum", "items"):
            if k in f:
                g[k] = f[k]
        if "example" in f:
            g["example"] = f["example"]
        if f.get("required"):
            g["required"] = True
        out[f["name"]] = g
    return out


def tools_config(case, case_path, tmp):
    entry = {
        "name": case["server"],
        "description": case.get("description", ""),
        "transport": "stdio",
        "command": "python3",
        "args": [str(HERE / "fakeserver.py"), str(case_path)],
        "env": {},
        "enabled": True,
    }
    entry.update(case.get("entry", {}))
    cfg = Path(tmp) / "mcp_config.json"
    cfg.write_text(json.dumps({"mcp_servers": [entry], "auto_connect": True}, indent=2), encoding="utf-8")
    return cfg


def mcpc_tools(mcpc, cfg):
    p = run([mcpc, "tools", "--profile", "craftbot", "--config", str(cfg), "--format", "json", "--quiet"])
    try:
        rows = json.loads(p.stdout or "[]")
    except json.JSONDecodeError:
        rows = []
    out = {}
    for r in rows:
        out[r.get("action")] = {
            "registered": r.get("registered", True) is not False,
            "description": r.get("description"),
            "inputSchema": mcpc_fields(r),
            "actionSets": [r.get("actionSet")],
            "rule": r.get("rule"),
        }
    # The diagnostics name the temporary config; one spelling keeps --out stable.
    stderr = p.stderr.strip().replace(str(cfg), "mcp_config.json")
    return {"exit": p.returncode, "actions": out, "stderr": stderr}


def compare_tools(h, m):
    diffs, notes = [], []
    for row in h["actions"]:
        a = row["action"]
        mr = m["actions"].get(a)
        mreg = bool(mr and mr["registered"])
        if row["registered"] != mreg:
            diffs.append((f"{a}.registered", row["registered"], mreg))
        if not (row["registered"] and mreg):
            continue
        for f in ("description", "inputSchema", "actionSets"):
            if row[f] != mr[f]:
                diffs.append((f"{a}.{f}", row[f], mr[f]))
        call = row.get("call", {})
        if call.get("tool") != row["tool"] or set(call.get("arguments", [])) != set(
                (row.get("inputSchema") or {}).keys()):
            notes.append(f"{a}: the host's handler calls {compact(call)}; mcpc rule: {compact(mr.get('rule'))}")
    host_actions = {r["action"] for r in h["actions"]}
    for a, mr in sorted(m["actions"].items()):
        if a not in host_actions and mr["registered"]:
            diffs.append((f"{a}.registered", None, True))
    return diffs, notes


# ---- main -----------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkout", required=True)
    ap.add_argument("--mcpc", required=True)
    ap.add_argument("--out", help="write both normalized sides of every case here")
    ap.add_argument("-v", action="store_true", help="print both sides of every mismatched case")
    a = ap.parse_args()
    checkout = Path(a.checkout)
    out = Path(a.out) if a.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)

    cases = [("config/" + p.stem, p) for p in sorted((HERE / "cases/config").glob("*.json"))]
    catalog = checkout / "app/config/mcp_config.json"
    if catalog.exists():
        cases.append(("config/catalog", catalog))
    tools = [("tools/" + p.stem, p) for p in sorted((HERE / "cases/tools").glob("*.json"))]

    results = []  # (case, diffs)
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in cases:
            h = host_config(checkout, path)
            m = mcpc_config(a.mcpc, path, tmp)
            diffs = compare_config(h, m)
            results.append((name, diffs, [], h, m))
        for name, path in tools:
            case = json.loads(path.read_text(encoding="utf-8"))
            cfg = tools_config(case, path, tmp)
            h = host_side("tools", checkout, cfg, path)
            m = mcpc_tools(a.mcpc, cfg)
            diffs, notes = compare_tools(h, m)
            results.append((name, diffs, notes, h, m))

    for name, diffs, notes, h, m in results:
        if out:
            safe = name.replace("/", "-")
            (out / f"{safe}.host.json").write_text(json.dumps(h, indent=1, sort_keys=True, ensure_ascii=False))
            (out / f"{safe}.mcpc.json").write_text(json.dumps(m, indent=1, sort_keys=True, ensure_ascii=False))
        print(("MATCH    " if not diffs else "MISMATCH ") + name)
        for f, hv, mv in diffs:
            print(f"    {f}: host {compact(hv)} | mcpc {compact(mv)}")
        for n in notes:
            print(f"    note: {n}")
        if diffs and a.v:
            print("    host: " + compact(h, 4000))
            print("    mcpc: " + compact(m, 4000))

    bad = [(n, d) for n, d, _, _, _ in results if d]
    noted = sum(1 for _, _, notes, _, _ in results if notes)
    print()
    print(f"{len(results)} behaviours: {len(results) - len(bad)} match, {len(bad)} mismatch"
          f" ({noted} with notes: what the host's handler calls, not compared)")
    for n, d in bad:
        print(f"  {n}: " + "; ".join(f"{f} host {compact(hv, 70)} mcpc {compact(mv, 70)}" for f, hv, mv in d))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
