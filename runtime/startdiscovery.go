package runtime

// StartDiscovery starts the first discovery of every enabled server that
// has not run yet, in the background, and returns at once: `mcpc run`
// calls it as it starts, so that a first listing or call waits for less.
// A server whose discovery ran already is left alone (a failed one is
// retried by the next listing, once its time has come).
//
// A chat's process still starts only when its first call knows its tool's
// server (SPEC §4): starting it alongside the discovery, on a guess, was
// tried and withdrawn (docs/decisions/0030-chat-processes-and-start-early.md). Only
// on request (GatewayOptions.StartEarly, mcpc run --start-early) does a
// client's initialize start every chat process of its chat
// (Chat.StartEarly); mcpc run then does not call StartDiscovery, so that
// the first chat's early starts are the discoveries (slot.startEarly).
func (h *Host) StartDiscovery() {
	if h.isClosed() {
		return
	}
	for _, s := range h.servers() {
		if s.cfg.Enabled {
			s.ensure()
		}
	}
}
