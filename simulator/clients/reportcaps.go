package clients

// The client report (--client-report) keeps to the caps of the suite's
// reports: a thousand keys would otherwise write tens of megabytes.
// Verdicts.ForReport bounds the clients it shows; it counts the rest.
// (Each client holds at most one finding per requirement.)

// ReportClients bounds the clients a report shows in detail.
const ReportClients = 100

// ForReport returns the verdicts bounded for a report: at most
// ReportClients clients, those that failed first (in the order they
// came). ClientsLeftOut counts the rest; the outcome, the requests and
// the results are not changed.
func (v Verdicts) ForReport() Verdicts {
	cs := make([]Client, 0, min(len(v.Clients), ReportClients))
	for _, failedFirst := range []bool{true, false} {
		for _, c := range v.Clients {
			if len(cs) < ReportClients && c.Passed != failedFirst {
				cs = append(cs, c)
			}
		}
	}
	v.ClientsLeftOut += len(v.Clients) - len(cs)
	v.Clients = cs
	return v
}
