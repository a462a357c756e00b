package simulator

import "net/http"

// FuzzSchedule is a schedule of what the simulator serves a client under
// fuzzing (package simulator/fuzz gives one, through Config.Middleware
// and Config.Fuzz): New binds it to its server, and GET /_control/fuzz
// serves its Report, what it served so far in words.
type FuzzSchedule interface {
	Bind(*Server)
	Report() any
}

func (s *Server) ctlFuzz(r *http.Request) answer {
	if s.cfg.Fuzz == nil {
		return errorAnswer(http.StatusNotFound, CodeNotFound, "no fuzz schedule: start the simulator with --fuzz-seed N", nil)
	}
	return jsonAnswer(http.StatusOK, s.cfg.Fuzz.Report())
}
