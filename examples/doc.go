// Package examples holds realistic configs per framework. Each case
// directory has an expected.txt with gpulint's text output for it; this
// test keeps them true (go test ./examples -update rewrites them).
//
// The package has only tests; this file carries its documentation.
package examples
