package simulator

import "testing"

// An exchange waits for the ones that arrived before it and are answered
// but not yet observed, never for one still being served.
func TestObserveOrder(t *testing.T) {
	var o observeOrder
	var first, second, third meter
	s1, s2, s3 := o.arrive(&first), o.arrive(&second), o.arrive(&third)
	if o.earlier(s2) {
		t.Fatal("the first request is still being served: the second need not wait for it")
	}
	first.answered.Store(true)
	if !o.earlier(s2) || !o.earlier(s3) {
		t.Fatal("the first request is answered but not observed: the later ones wait")
	}
	if o.earlier(s1) {
		t.Fatal("nothing arrived before the first")
	}
	o.done(s1)
	if o.earlier(s2) || o.earlier(s3) {
		t.Fatal("the first was observed: nothing to wait for")
	}
	second.answered.Store(true)
	if !o.earlier(s3) {
		t.Fatal("the second is answered but not observed: the third waits")
	}
	o.done(s2)
	o.done(s3)
	if len(o.flight) != 0 {
		t.Fatalf("%d requests still in flight after all were observed", len(o.flight))
	}
}
