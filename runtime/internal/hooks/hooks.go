// Package hooks holds the points where a test of the runtime's packages
// runs its own code inside the host core: each is nil but in a test.
package hooks

// AfterStartRead runs in a chat's process start between the client's
// settings given to a new process and the process counting as running:
// where a logging/setLevel used to be lost.
var AfterStartRead func()

// ForwardProgress runs first in runtime.ForwardProgress.
var ForwardProgress func()

// TablePublished runs in the host's rebuild of its tool table, after the
// new table is published and before the listeners (a gateway registering
// the tools with its MCP server) hear of it.
var TablePublished func()

// ResponseBehindBarrier runs in the read loop of a process's or remote
// server's connection when it has read a response that waits behind
// notifications read before it (runtime's notifyorder.go), before the
// client's SDK gets the response.
var ResponseBehindBarrier func()
