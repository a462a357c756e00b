package simulate

import (
	"io"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/simulator/variant"
)

func TestConformingDrawSetting(t *testing.T) {
	o, err := parseOptions("simulator", []string{"--conforming-draw", "5"}, io.Discard)
	if err != nil || o.draw == nil || o.draw.N != 5 {
		t.Fatalf("--conforming-draw 5: %+v, %v", o.draw, err)
	}
	t.Setenv("TCM_SIM_CONFORMING_DRAW", "7")
	if o, err := parseOptions("simulator", nil, io.Discard); err != nil || o.draw == nil || o.draw.N != 7 {
		t.Fatalf("TCM_SIM_CONFORMING_DRAW=7: %+v, %v", o.draw, err)
	}
	if _, err := parseOptions("simulator", []string{"--conforming-draw", "-1"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--conforming-draw") {
		t.Errorf("--conforming-draw -1: %v", err)
	}
	o, err = parseOptions("simulator", []string{"--conforming-draw", "5:heavy"}, io.Discard)
	if err != nil || o.draw == nil || o.draw.N != 5 || *o.draw != variant.New(5).Heavy() || variant.New(5) == variant.New(5).Heavy() {
		t.Errorf("--conforming-draw 5:heavy: %+v, %v", o.draw, err)
	}
}
