package check

// policies/bundle.bin is the built-in policies compiled and encoded by
// BuildBundle; TestBundleCurrent fails while it is stale.
//go:generate go run ./internal/genbundle -o ../../policies/bundle.bin
