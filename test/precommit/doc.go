// Package precommit runs gpulint's hooks (.pre-commit-hooks.yaml)
// with the real pre-commit: a temporary git repository points at a
// snapshot of this working tree, and real commits are made through the
// installed hook. It skips when pre-commit is not on PATH; .ci/run
// installs it.
//
// The package has only tests; this file carries its documentation.
package precommit
