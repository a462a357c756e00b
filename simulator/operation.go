package simulator

import "net/http"

// Operation names one operation of the API, as middleware, fault
// injection and the logs name it.
type Operation string

// The operations.
const (
	OpFeed   Operation = "feed"
	OpVideos Operation = "videos"
	OpHealth Operation = "health"
)

// Middleware wraps the handler of one operation (Config.Middleware). It is
// called once per operation when the server is built, so state it keeps in
// its closure belongs to one server and one operation. It sees requests
// before the server authenticates them; ParseFeedQuery, ParseBearer and
// ParseVideosRequest read a request as the server will.
type Middleware func(op Operation, next http.Handler) http.Handler

// apiRoute is one route of the API. apiTable is the one list of them:
// serve routes by it, and the journal and the middleware name operations
// by it.
type apiRoute struct {
	method, path string
	op           Operation
	h            func(*Server, *call, *http.Request) answer
	wrapped      http.Handler // h under Config.Middleware; nil without middleware
}

// isOperation: op names an operation of apiTable.
func isOperation(op Operation) bool {
	for _, rt := range apiTable() {
		if rt.op == op {
			return true
		}
	}
	return false
}
