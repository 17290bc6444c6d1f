// Package act runs gpulint's GitHub Action end to end with the real
// runner implementation of nektos/act in host mode (no Docker): act reads
// action.yml, gets gpulint (a release binary that a local server serves at
// the server URL act is given, checked against checksums.txt; or, at a ref
// that is no release or for a tampered archive, a build from source with
// the host's Go), runs
// `gpulint action` on a pull_request event against a fake GitHub API, and
// the test checks the comment, the suggestion, the annotations in act's
// log and the step outputs.
//
// It needs act on PATH (`go install github.com/nektos/act@v0.2.89`, as
// .ci/run does) and skips without it, or with -short.
//
// The package has only tests; this file carries its documentation.
package act
