#!/usr/bin/env python3
"""A stdio MCP server that lists the tools of one tools case and echoes calls.

usage: fakeserver.py CASE.json

CASE.json holds {"pages": [[tool, ...], ...]} (one list per tools/list page;
a page other than the last carries nextCursor "<index of the next page>").
A tools/call is answered with the tool name and the arguments it received,
so a caller can see which tool a handler really called and with what.
Newline-delimited JSON-RPC, as both CraftBot's and mcpc's stdio clients speak.
"""
import json
import sys


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        pages = json.load(f)["pages"]
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        if "id" not in msg:
            continue  # a notification
        method, params = msg.get("method"), msg.get("params") or {}
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion", "2024-11-05"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostcheck-fake", "version": "1"},
            }
        elif method == "tools/list":
            i = int(params.get("cursor") or 0)
            result = {"tools": pages[i]}
            if i + 1 < len(pages):
                result["nextCursor"] = str(i + 1)
        elif method == "tools/call":
            echo = {"tool": params.get("name"), "arguments": params.get("arguments")}
            result = {"content": [{"type": "text", "text": json.dumps(echo, sort_keys=True)}]}
        elif method == "ping":
            result = {}
        else:
            reply = {"jsonrpc": "2.0", "id": msg["id"],
                     "error": {"code": -32601, "message": "method not found"}}
            print(json.dumps(reply), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)


if __name__ == "__main__":
    main()
