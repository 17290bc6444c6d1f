// Package release checks what a release is made of without publishing
// one: .goreleaser.yaml's targets, flags, asset names and checksums
// against what action.yml downloads; the Dockerfile's build stage, built
// here with its own flags into a static binary; and the README's install
// snippets, which must pin something that exists.
//
// goreleaser itself does not run here: `go install` of
// github.com/goreleaser/goreleaser/v2@v2.17.0 (the newest the Go proxy
// serves that builds with Go 1.26; v2.18.2 needs Go 1.27.1) did not finish
// in 330 s on 2 cores, still downloading its module graph. Nor does
// docker: there is no engine. The tests build the same binaries with the
// same flags instead.
//
// The package has only tests; this file carries its documentation.
package release
