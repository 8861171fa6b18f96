package detector

import "testing"

func TestChangeTracker(t *testing.T) {
	c := newChangeTracker()
	k := templateKey{Namespace: "team", Name: "web"}
	if _, changed := c.get(k); changed {
		t.Fatal("a fresh tracker reports a change")
	}
	c.mark(k)
	token, changed := c.get(k)
	if !changed {
		t.Fatal("a marked template is not changed")
	}
	// A change arriving while the template is processed survives done.
	c.mark(k)
	c.done(k, token)
	token, changed = c.get(k)
	if !changed {
		t.Fatal("done forgot a newer change")
	}
	c.done(k, token)
	if _, changed := c.get(k); changed {
		t.Error("done did not forget the change it saw")
	}
	c.mark(k)
	c.forget(k)
	if _, changed := c.get(k); changed {
		t.Error("forget did not forget")
	}
}

func TestTemplateKeyStoreKey(t *testing.T) {
	if got := (templateKey{Namespace: "ns", Name: "n"}).storeKey(); got != "ns/n" {
		t.Errorf("namespaced store key %q", got)
	}
	if got := (templateKey{Name: "n"}).storeKey(); got != "n" {
		t.Errorf("cluster-scoped store key %q", got)
	}
}
