"""Run CraftBot's own MCP code (a checkout given by path) on one file.

The host's modules are imported from the checkout as they are: config.py,
server.py, client.py, adapter.py and the action registry. Only what the
machine lacks is supplied here, and none of it decides an outcome:

- agent_core.utils.logger (the host's needs loguru): a logger that keeps
  the records, so a skipped entry can be counted;
- the package __init__ files of agent_core and agent_core.core, which import
  the whole agent (LLM clients, databases): bare packages instead, so that
  only the MCP modules and the registry they import are loaded;
- httpx and websockets (absent): a client and a socket that record the
  URLs the host's transports use; the host's transport code runs unchanged.

Starting a stdio server goes through the host's StdioTransport.connect up
to asyncio.create_subprocess_exec, which is called for real with the same
program, arguments and environment, but with executable=/bin/true: Python
checks every argument and environment value exactly as it would for the
real command (a list, a number, a NUL raise there), and nothing the
file names is run. The connection is then abandoned (it has no server).
"""

import asyncio
import contextvars
import importlib
import json
import math
import sys
import types
from pathlib import Path

TRUE = "/bin/true"


class _Abandon(Exception):
    """Raised after a start was checked, so the host's connect gives up."""


class RecordingLogger:
    def __init__(self):
        self.records = []

    def _log(self, level, msg, *a, **kw):
        self.records.append((level, str(msg)))

    def debug(self, msg, *a, **kw):
        self._log("debug", msg)

    def info(self, msg, *a, **kw):
        self._log("info", msg)

    def warning(self, msg, *a, **kw):
        self._log("warning", msg)

    def error(self, msg, *a, **kw):
        self._log("error", msg)

    def exception(self, msg, *a, **kw):
        self._log("error", msg)


LOG = RecordingLogger()
# Which loaded entry the host's MCPServerConnection is starting (set per task).
CURRENT = contextvars.ContextVar("current_entry", default=None)
# One record per start the host attempted, in order.
ATTEMPTS = []


def _bare_package(name, path):
    m = types.ModuleType(name)
    m.__path__ = [str(path)]
    sys.modules[name] = m
    return m


def _install_remote_recorders():
    """httpx and websockets as the host's transports use them, recording."""

    class _Stream:
        def __init__(self, url):
            self.url = url

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            return False

        async def aiter_lines(self):
            await asyncio.Event().wait()  # no server: nothing ever arrives
            yield ""

    class AsyncClient:
        def __init__(self, *a, **kw):
            pass

        def stream(self, method, url, **kw):
            rec = _attempt()
            rec.setdefault("requests", []).append([method, url])
            return _Stream(url)

        async def post(self, url, **kw):
            rec = _attempt()
            rec.setdefault("requests", []).append(["POST", url, (kw.get("json") or {}).get("method")])
            raise _Abandon()

        async def aclose(self):
            pass

    httpx = types.ModuleType("httpx")
    httpx.AsyncClient = AsyncClient
    sys.modules["httpx"] = httpx

    class _Socket:
        def __init__(self, url):
            self.url = url

        async def send(self, data):
            rec = _attempt()
            rec.setdefault("requests", []).append(["SEND", json.loads(data).get("method")])

        async def close(self):
            pass

        def __aiter__(self):
            return self

        async def __anext__(self):
            await asyncio.Event().wait()

    async def connect(url, *a, **kw):
        rec = _attempt()
        rec.setdefault("requests", []).append(["CONNECT", url])
        return _Socket(url)

    ws = types.ModuleType("websockets")
    ws.connect = connect
    sys.modules["websockets"] = ws


def _attempt():
    entry = CURRENT.get()
    for rec in reversed(ATTEMPTS):
        if rec["_entry"] is entry:
            return rec
    rec = {"_entry": entry}
    ATTEMPTS.append(rec)
    return rec


def load_host(checkout):
    checkout = Path(checkout)
    _bare_package("agent_core", checkout / "agent_core")
    _bare_package("agent_core.core", checkout / "agent_core/core")
    _bare_package("agent_core.core.impl", checkout / "agent_core/core/impl")
    _bare_package("agent_core.core.impl.mcp", checkout / "agent_core/core/impl/mcp")
    _bare_package("agent_core.utils", checkout / "agent_core/utils")
    logmod = types.ModuleType("agent_core.utils.logger")
    logmod.logger = LOG
    sys.modules["agent_core.utils.logger"] = logmod
    _install_remote_recorders()
    mods = types.SimpleNamespace()
    mods.registry = importlib.import_module("agent_core.core.action_framework")
    mods.config = importlib.import_module("agent_core.core.impl.mcp.config")
    mods.server = importlib.import_module("agent_core.core.impl.mcp.server")
    mods.client = importlib.import_module("agent_core.core.impl.mcp.client")
    mods.adapter = importlib.import_module("agent_core.core.impl.mcp.adapter")

    conn_cls = mods.server.MCPServerConnection
    real_connect = conn_cls.connect

    async def connect(self):
        CURRENT.set(self.config)
        ATTEMPTS.append({"_entry": self.config})
        return await real_connect(self)

    conn_cls.connect = connect
    return mods


def _checked_exec(real_exec):
    async def exec_(program, *args, **kw):
        rec = _attempt()
        rec["command"], rec["args"] = program, list(args)
        try:
            proc = await real_exec(program, *args, executable=TRUE, **kw)
        except Exception as e:  # what the host's connect catches
            rec["exec"] = f"{type(e).__name__}: {e}"
            raise
        rec["exec"] = "ok"
        await proc.communicate()
        raise _Abandon()

    return exec_


def py_str(v):
    """A value as the host's f-strings spell it (f"mcp_{name}")."""
    return f"{v}"


def jsonable(v):
    """v as JSON can hold it (NaN spelled out), for printing."""
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return str(v)
    if isinstance(v, dict):
        return {py_str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def _start_verdict(rec, transport):
    """Whether the host's start of this entry succeeds, and why not."""
    if transport == "stdio":
        ex = rec.get("exec")
        if ex is None:
            return False, "fails before exec (the host's connect raised)"
        if ex != "ok":
            return False, "exec raises " + ex
        return True, ""
    reqs = rec.get("requests", [])
    if transport == "websocket":
        sent = [r for r in reqs if r[0] == "SEND"]
        if not sent:
            return False, "websocket: initialize is refused before it is sent (the transport is not yet connected)"
        return True, ""
    posts = [r[1] for r in reqs if r[0] == "POST"]
    return False, ("sse: initialize is POSTed to %s, not to the endpoint the server announces, and no "
                   "notifications/initialized follows: a standard MCP SSE server never answers"
                   % (posts[0] if posts else "-"))


async def _check_start(mods, entry):
    """Start one loaded entry the way the host does, checked, not run."""
    conn = mods.server.MCPServerConnection(entry)
    await conn.connect()
    CURRENT.set(entry)
    rec = _attempt()
    ok, why = _start_verdict(rec, entry.transport)
    out = {"starts": ok}
    if why:
        out["why"] = why
    if entry.transport == "stdio" and "command" in rec:
        out["exec"] = [jsonable(rec["command"]), jsonable(rec["args"])]
    if rec.get("requests"):
        out["requests"] = rec["requests"]
    return out


async def run_config(mods, path):
    """What the host loads from path and what it starts."""
    asyncio.create_subprocess_exec = _checked_exec(asyncio.create_subprocess_exec)
    client = mods.client.MCPClient()
    raw = None
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except Exception:
        pass
    await client.initialize(Path(path))
    errors = [m for lvl, m in LOG.records if lvl == "error" and "Failed to load MCP config" in m]
    if errors:
        return {"load": "no server", "why": errors[0]}
    cfg = client.config
    loaded = cfg.mcp_servers
    # What auto_connect started: one record per connect the host made.
    connects = [py_str(r["_entry"].name) for r in ATTEMPTS if r["_entry"] is not None]
    ATTEMPTS.clear()
    servers = {}
    for e in loaded:
        key = py_str(e.name)
        if key in servers:
            servers[key]["entries"] += 1
            servers[key]["enabled"] = servers[key]["enabled"] or bool(e.enabled)
            continue
        first = cfg.get_server_by_name(e.name)
        s = {"entries": 1, "enabled": bool(e.enabled), "transport": first.transport,
             "actionSet": py_str(first.resolved_action_set_name)}
        if first.transport == "stdio":
            s["command"], s["args"] = jsonable(first.command), jsonable(first.args)
        else:
            s["url"] = jsonable(first.url)
        s.update(await _check_start(mods, first))
        ATTEMPTS.clear()
        servers[key] = s
    raw_servers = raw.get("mcp_servers", []) if isinstance(raw, dict) else []
    skipped_enabled = 0
    n_skipped = len(raw_servers) - len(loaded)
    if n_skipped:
        # The skipped entries are those from_dict refused; which were enabled.
        for d in raw_servers:
            if not isinstance(d, dict):
                continue
            try:
                mods.config.MCPServerConfig.from_dict(d)
            except (KeyError, ValueError):
                if d.get("enabled", True):
                    skipped_enabled += 1
    return {
        "load": "ok",
        "autoConnect": bool(cfg.auto_connect),
        "servers": servers,
        "connects": sorted(set(connects)),
        "connectAttempts": len(connects),
        "skipped": n_skipped,
        "skippedEnabled": skipped_enabled,
    }


async def run_tools(mods, cfg_path, case):
    """The action registry the host builds from a server listing case's tools."""
    client = mods.client.MCPClient()
    await client.initialize(Path(cfg_path))
    count = client.register_tools_as_actions()
    reg = mods.registry.registry_instance._registry
    server = case["server"]
    loop = asyncio.get_running_loop()
    out = []
    for page in case["pages"]:
        for tool in page:
            name = f"mcp_{server}_{tool.get('name', '')}"
            impls = reg.get(name, {})
            act = impls.get("all")
            row = {"tool": tool.get("name", ""), "action": name, "registered": act is not None}
            if act is not None:
                md = act.metadata
                row.update({"description": md.description, "inputSchema": jsonable(md.input_schema),
                            "actionSets": md.action_sets, "mode": md.mode})
                props = (tool.get("inputSchema") or {}).get("properties") or {}
                arg = {k: "v" for k in props} if isinstance(props, dict) else {}
                res = await loop.run_in_executor(None, act.handler, arg)
                echo = res.get("result") if isinstance(res, dict) else None
                try:
                    echo = json.loads(echo)
                    row["call"] = {"tool": echo["tool"], "arguments": sorted((echo["arguments"] or {}).keys())}
                except Exception:
                    row["call"] = {"error": jsonable(res)}
            out.append(row)
    await client.disconnect_all()
    return {"registered": count, "actions": out}


def main():
    mode, checkout, path = sys.argv[1], sys.argv[2], sys.argv[3]
    mods = load_host(checkout)
    if mode == "config":
        res = asyncio.run(run_config(mods, path))
    else:
        with open(sys.argv[4], encoding="utf-8") as f:
            case = json.load(f)
        res = asyncio.run(run_tools(mods, path, case))
    json.dump(res, sys.stdout, sort_keys=True, indent=1)
    print()


if __name__ == "__main__":
    main()
