package clients

import (
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// Every client requirement of the catalogue has a rule of the judge, and
// every rule judges a client requirement: a requirement added to the
// catalogue fails here until the judge checks it (CONTRIBUTING.md).
func TestEveryClientRequirementHasARule(t *testing.T) {
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	ruled := map[catalogue.ID]bool{}
	for r := range nRules {
		ru := rules[r]
		q, ok := cat.Lookup(ru.id)
		if !ok || q.Kind != catalogue.Client {
			t.Errorf("rule %d judges %q, which is no client requirement of the catalogue", r, ru.id)
		}
		if ru.must == "" || ru.unexercise == "" {
			t.Errorf("rule %s: no words for a finding or for not exercised", ru.id)
		}
		ruled[ru.id] = true
	}
	for _, q := range cat.OfKind(catalogue.Client) {
		if !ruled[q.ID] {
			t.Errorf("%s: the judge has no rule for it (simulator/clients/rules.go)", q.ID)
		}
	}
}

// Every scenario is whole: its words, its act, what it sees and how it
// judges (a scenario added half fails here, and ci/examples runs the
// polite client through each).
func TestScenariosAreComplete(t *testing.T) {
	names := map[string]bool{}
	for _, sc := range scenarios {
		if sc.Name == "" || sc.When == "" || sc.Does == "" || sc.Expect == "" {
			t.Errorf("scenario %q: a name, a moment, what it does and what a good client does, all in words", sc.Name)
		}
		if sc.act == nil || sc.see == nil || sc.judge == nil {
			t.Errorf("scenario %q: act, see and judge are all needed", sc.Name)
		}
		if names[sc.Name] {
			t.Errorf("scenario %q twice", sc.Name)
		}
		names[sc.Name] = true
	}
}
