// Package archtest holds the test of gpulint's import graph: the one-way
// dependencies STYLE.md §2 sets out. It has no code of its own.
package archtest
