//go:build !noprewarm

package cli

// prewarm: a run over a few named files starts its kinds' schema checks and
// rules before the rest is ready (lint.SniffKinds). bench/prewarm.sh builds
// gpulint with -tags noprewarm to measure what that saves.
const prewarm = true
