package compile

// HoldsPlanEncoding reports whether r keeps the canonical encoding its
// digest was computed over (Options.KeepPlanJSON).
func HoldsPlanEncoding(r *Result) bool { return r.unsealed != nil }

// PlanEncoding is that encoding.
func PlanEncoding(r *Result) []byte { return r.unsealed }
