package normalize

// plans_gen.go holds the validator's checks, derived from schemas/*.cue by
// internal/planbuild (CUE runs in the generator and the tests, not in the
// gpulint binary); TestGeneratedPlans fails while it is stale.
//go:generate go run ./internal/genplans -o plans_gen.go
