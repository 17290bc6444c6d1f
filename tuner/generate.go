package tuner

// catalog_data.go is the catalog in profiles/*.yaml rendered as Go source;
// TestCatalogData fails while it is stale. docs/validation.md's table is
// the validation cases run against the model;
// TestValidationAgainstPublishedMeasurements fails while it is stale.
//go:generate go run ./internal/gencatalog -o catalog_data.go
//go:generate go run ./internal/genvalidation -doc ../docs/validation.md
