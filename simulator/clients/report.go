package clients

import "slices"

// The client report (cmd/simulator --client-report) keeps to the caps of
// the suite's reports: a thousand keys with fifty findings each would
// otherwise write a hundred megabytes. Verdicts.ForReport bounds what it
// shows; what it leaves out is counted.
const (
	// ReportClients bounds the clients a report shows in detail.
	ReportClients = 100
	// ReportFindings bounds the findings a report shows whole per client.
	ReportFindings = 10
)

// ForReport returns the verdicts bounded for a report: at most
// ReportClients clients, those that failed first (in the order they came),
// each with at most ReportFindings findings whole. ClientsLeftOut and each
// client's FindingsLeftOut count the rest; requests and results are not
// changed.
func (v Verdicts) ForReport() Verdicts {
	cs := make([]Client, 0, min(len(v.Clients), ReportClients))
	for _, failedFirst := range []bool{true, false} {
		for _, c := range v.Clients {
			if len(cs) == ReportClients {
				break
			}
			if c.Passed != failedFirst {
				if len(c.Findings) > ReportFindings {
					c.FindingsLeftOut += len(c.Findings) - ReportFindings
					c.Findings = slices.Clip(c.Findings[:ReportFindings])
				}
				cs = append(cs, c)
			}
		}
	}
	v.ClientsLeftOut += len(v.Clients) - len(cs)
	v.Clients = cs
	return v
}
