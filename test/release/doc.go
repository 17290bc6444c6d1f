// Package release checks what a release is made of without publishing
// one: .goreleaser.yaml's targets, flags, asset names and checksums
// against what action.yml downloads; the Dockerfile's build stage, built
// here with its own flags into a static binary; and the README's install
// snippets, which must pin something that exists.
//
// goreleaser itself runs in .ci/run, as a snapshot build of a clone (no
// publishing), which also checks the archives against checksums.txt; these
// tests keep the contract between .goreleaser.yaml and action.yml where
// `go test` alone sees it. Docker does not run here (there is no engine):
// the tests build the same static binary with the Dockerfile's flags.
//
// The package has only tests; this file carries its documentation.
package release
