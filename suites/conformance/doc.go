// Package conformance is the conformance suite of the Tracked-Channel
// Monitoring API as a library: it judges a server over HTTP against the
// contract, one Ginkgo spec per statement, each labelled with its feature
// and the catalogue ids of the requirements it checks. Only time control
// (waiting for a rate window) may go through the simulator's control API.
//
// As csi-test's sanity package, it has one Config (NewConfig, filled by
// flags, the environment or the caller, then only read) and two entry
// points: Run runs the whole suite as a Go test (the bundled simulator when
// no target is given, the preflight, the strict filter, reports and a
// summary), and Register declares the specs inside another Ginkgo suite.
// What a run learns and builds lives in its Session.
//
//	cfg := conformance.NewConfig()
//	cfg.Target, cfg.ProKey = "https://staging.example", os.Getenv("TCM_PRO_KEY")
//	var _ = conformance.Register(cfg)
//
// Whatever the target does, a run stays safe and bounded: keys go to the
// target's origin only (no redirect is followed), a body is read up to
// Config.MaxBody, a request takes at most Config.RequestTimeout and the
// run Config.RunDeadline (past it the run is incomplete, reports written), an
// unreadable or too long Retry-After is a finding rather than a wait, and
// every output is redacted before anything is cut (package redact). The
// preflight says in one line what keeps a target from being judged.
//
// A run ends passed, failed or incomplete (ExitStatus: 0, 1, 3; 2 for a
// refused one), and its summary and reports name first every must
// requirement no spec verified, with the setting that would.
//
// The specs are grouped by operation and concern, one file each: health,
// auth, pro, feed (pagination), events, videos, ratelimit and errors;
// strict.go holds every strict spec (the simulator's choices where the
// spec is silent).
package conformance
