package simulator

import (
	"errors"
	"net/http"
)

// The control routes of what the server saw: the request journal, the
// clients' verdicts and the client scenarios.

func (s *Server) ctlRequests(r *http.Request) answer {
	if s.journal == nil {
		return errorAnswer(http.StatusNotFound, CodeNotFound, "the journal is off (--journal-size -1)", nil)
	}
	f, problems := parseEntryFilter(r.URL.Query())
	if len(problems) > 0 {
		return queryError(problems)
	}
	list, matched, dropped, settled := s.journal.list(f)
	return jsonAnswer(http.StatusOK, map[string]any{"requests": list, "matched": matched, "capacity": len(s.journal.ring), "dropped": dropped, "settled": settled})
}

func (s *Server) ctlClearRequests(r *http.Request) answer {
	s.journal.Clear() // the verdicts stay: DELETE /_control/clients clears them
	return jsonAnswer(http.StatusOK, map[string]any{"requests": []Entry{}, "matched": 0})
}

// judgeOff answers a client route when no judge is configured.
func (s *Server) judgeOff() (answer, bool) {
	if s.judge != nil {
		return answer{}, false
	}
	return errorAnswer(http.StatusNotFound, CodeNotFound, "client judging is off (tcmkit simulate --no-client-judge; in Go, set Config.Clients to clients.Judging, package simulator/clients)", nil), true
}

func (s *Server) ctlClients(r *http.Request) answer {
	if a, off := s.judgeOff(); off {
		return a
	}
	final := false
	if v := r.URL.Query().Get("final"); v != "" {
		if v != "true" && v != "false" {
			return queryError([]QueryProblem{{Parameter: "final", Value: excerpt(v), Rule: "must be true or false"}})
		}
		final = v == "true"
	}
	return s.judge.Verdicts(final)
}

func (s *Server) ctlClearClients(r *http.Request) answer {
	if a, off := s.judgeOff(); off {
		return a
	}
	s.resetJudge()
	return s.judge.Verdicts(false)
}

func (s *Server) ctlScenarios(r *http.Request) answer {
	if a, off := s.judgeOff(); off {
		return a
	}
	return s.judge.Scenarios()
}

func (s *Server) ctlStartScenario(r *http.Request) answer {
	if a, off := s.judgeOff(); off {
		return a
	}
	var b struct {
		Name string `json:"name"`
	}
	if a, ok := readControl(r, &b); !ok {
		return a
	}
	run, err := s.judge.StartScenario(b.Name)
	switch {
	case errors.Is(err, ErrNoScenario):
		return errorAnswer(http.StatusNotFound, CodeNotFound, err.Error(), map[string]any{"name": excerpt(b.Name)})
	case err != nil:
		return s.internalError(r, err)
	}
	s.log.Info("scenario armed", "scenario", b.Name)
	run.Status = http.StatusCreated
	return run
}

func (s *Server) ctlStopScenario(r *http.Request) answer {
	if a, off := s.judgeOff(); off {
		return a
	}
	s.judge.StopScenario()
	return s.judge.Scenarios()
}
