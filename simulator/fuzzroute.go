package simulator

import "net/http"

// ctlFuzz serves what the fuzz schedule (a Layer with Served) served so
// far.
func (s *Server) ctlFuzz(r *http.Request) answer {
	report := served(s.cfg.Layers)
	if report == nil {
		return errorAnswer(http.StatusNotFound, CodeNotFound, "no fuzz schedule: start the simulator with --fuzz-seed N", nil)
	}
	return report()
}
