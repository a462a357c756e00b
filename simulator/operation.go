package simulator

import "net/http"

// Operation names one operation of the API, as layers, fault
// injection and the logs name it.
type Operation string

// The operations.
const (
	OpFeed   Operation = "feed"
	OpVideos Operation = "videos"
	OpHealth Operation = "health"
)

// apiRoute is one route of the API. apiTable is the one list of them:
// serve routes by it, and the journal and the layers name operations
// by it.
type apiRoute struct {
	method, path string
	op           Operation
	h            func(*Server, *call, *http.Request) answer
	layered      Answerer // h under Config.Layers; nil without layers
	// faulted is an injected fault's answer under the named faults of
	// Config.Layers (Layer.Fault): a named fault edits what an injected
	// fault answers as it edits the server's (retry-after-missing takes
	// an injected 429's Retry-After too); nil without named faults.
	faulted Answerer
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
