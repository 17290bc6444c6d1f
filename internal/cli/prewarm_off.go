//go:build noprewarm

package cli

// prewarm is off in the build bench/prewarm.sh compares against.
const prewarm = false
