// The round trip of ci/gocodegen, a module of its own: the package tcmapi that
// oapi-codegen generates (ci/openapi-tools.sh writes it, git ignores it)
// imports github.com/oapi-codegen/runtime, which the kit does not need.
// Run go mod tidy here only while tcmapi is generated.
module github.com/tcmkit/tcmkit/ci/gocodegen

go 1.26.0

require github.com/oapi-codegen/runtime v1.8.0

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
)
