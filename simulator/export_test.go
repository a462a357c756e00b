package simulator

import (
	"net/http"
	"testing"
)

// CheckControlAnswer validates an answer of a control route (METHOD /path,
// as documented) against controlapi.yaml, for the tests of this directory
// that live outside the package (clients_test.go).
func CheckControlAnswer(t *testing.T, route string, status int, header http.Header, body []byte) {
	t.Helper()
	loadControlDoc(t).check(t, route, response{status: status, header: header, body: body})
}
