// The module proxy of ci/install.sh, a module of its own (so that the kit
// does not depend on golang.org/x/mod): it writes one version of the kit's
// module, from a git revision, as a GOPROXY=file://… directory.
module github.com/tcmkit/tcmkit/ci/modproxy

go 1.26.0

require golang.org/x/mod v0.38.0
