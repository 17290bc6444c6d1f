package cli

// Exit codes. They are the whole contract with CI systems and hooks.
const (
	// ExitOK: nothing at or above --fail-on.
	ExitOK = 0
	// ExitFindings: findings at or above --fail-on (a parse error counts).
	ExitFindings = 1
	// ExitUsage: bad flags, an unknown GPU or model, an invalid project file.
	ExitUsage = 2
	// ExitInternal: gpulint itself could not work.
	ExitInternal = 3
)

// usageError marks errors that exit with ExitUsage.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// findingsError marks a run that completed with findings at or above the
// threshold; it prints nothing itself.
type findingsError struct{}

func (findingsError) Error() string { return "findings at or above the fail-on level" }
