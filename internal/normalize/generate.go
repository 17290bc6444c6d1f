package normalize

// plans_gen.go holds the validator's checks, derived from schemas/*.cue by
// the builder in plan_build_test.go (CUE is a test dependency only).
//go:generate go test -run ^TestGeneratedPlans$ -update .
