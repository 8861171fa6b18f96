package nodeagent

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"POD_IP": "127.1.0.7", "NAME": "web-0", "EMPTY": "", "NESTED": "$(NAME)"}
	lookup := func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"--listen=$(POD_IP):8080", "--listen=127.1.0.7:8080"},
		{"$(NAME).$(NAME)", "web-0.web-0"},
		{"$(EMPTY)x", "x"},
		{"$(UNDEFINED)", "$(UNDEFINED)"},
		{"$$(NAME)", "$(NAME)"},
		{"$$$(NAME)", "$web-0"},
		{"$$$$", "$$"},
		{"cost: $5", "cost: $5"},
		{"trailing $", "trailing $"},
		{"$(NAME", "$(NAME"},
		{"$(NAME $(NAME)", "$(NAME $(NAME)"},
		{"$()", "$()"},
		{"$(NESTED)", "$(NAME)"}, // expanded once, never recursively
		{"ünïcode $(NAME) ✓", "ünïcode web-0 ✓"},
	} {
		if got := expand(tc.in, lookup); got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPathRewriter(t *testing.T) {
	r := newPathRewriter([]pathMapping{
		{container: "/etc/karmada/pki", host: "/agent/pods/p/volumes/pki"},
		{container: "/etc/karmada/pki/etcd", host: "/agent/pods/p/volumes/etcd-client"},
		{container: "/etc/config/app.yaml", host: "/agent/pods/p/volumes/config/app.yaml"},
		{container: "/var/lib/etcd/", host: "/agent/claims/data"},
		{container: "/", host: "/never"},
	})
	for _, tc := range []struct{ in, want string }{
		{"--cert-file=/etc/karmada/pki/server.crt", "--cert-file=/agent/pods/p/volumes/pki/server.crt"},
		// The longer mount wins.
		{"--etcd-cafile=/etc/karmada/pki/etcd/ca.crt", "--etcd-cafile=/agent/pods/p/volumes/etcd-client/ca.crt"},
		{"/etc/karmada/pki", "/agent/pods/p/volumes/pki"},
		{"/etc/karmada/pki/", "/agent/pods/p/volumes/pki/"},
		// subPath: a file mounted alone.
		{"--config=/etc/config/app.yaml", "--config=/agent/pods/p/volumes/config/app.yaml"},
		{"--config=/etc/config/app.yaml.bak", "--config=/etc/config/app.yaml.bak"},
		// Only whole components, only where a path starts.
		{"/etc/karmada/pkix/a", "/etc/karmada/pkix/a"},
		{"/opt/etc/karmada/pki/a", "/opt/etc/karmada/pki/a"},
		{"https://host/etc/karmada/pki", "https://host/etc/karmada/pki"},
		{"--data-dir=/var/lib/etcd", "--data-dir=/agent/claims/data"},
		// Lists and several paths in one string.
		{"--tls=/etc/karmada/pki/a.crt,/etc/karmada/pki/etcd/b.crt", "--tls=/agent/pods/p/volumes/pki/a.crt,/agent/pods/p/volumes/etcd-client/b.crt"},
		{"a:/var/lib/etcd/x b=/etc/karmada/pki", "a:/agent/claims/data/x b=/agent/pods/p/volumes/pki"},
		{"KEY='/etc/karmada/pki/k'", "KEY='/agent/pods/p/volumes/pki/k'"},
		// A mount at / is ignored; unrelated paths stay.
		{"/usr/bin/thing", "/usr/bin/thing"},
		{"no paths", "no paths"},
	} {
		if got := r.rewrite(tc.in); got != tc.want {
			t.Errorf("rewrite(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vol")
	read := func() map[string]string {
		t.Helper()
		got := map[string]string{}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name()[0] == '.' {
				continue
			}
			// Through the top-level link, as a reader of the volume does.
			root, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				info, err := d.Info()
				if err != nil {
					return err
				}
				data, err := os.ReadFile(p)
				rel, _ := filepath.Rel(root, p)
				got[filepath.Join(e.Name(), rel)] = info.Mode().Perm().String() + " " + string(data)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return got
	}

	files := map[string]volumeFile{
		"tls.crt":       {data: []byte("cert 1"), mode: 0o644},
		"tls.key":       {data: []byte("key 1"), mode: 0o600},
		"nested/ca.crt": {data: []byte("ca"), mode: 0o644},
	}
	if err := writeAtomic(dir, files); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"tls.crt": "-rw-r--r-- cert 1", "tls.key": "-rw------- key 1", "nested/ca.crt": "-rw-r--r-- ca"}
	if diff := cmp.Diff(want, read()); diff != "" {
		t.Errorf("first write (-want +got):\n%s", diff)
	}
	first, err := os.Readlink(filepath.Join(dir, dataLink))
	if err != nil {
		t.Fatal(err)
	}

	// Unchanged: nothing is written.
	if err := writeAtomic(dir, files); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Readlink(filepath.Join(dir, dataLink)); again != first {
		t.Errorf("an unchanged payload was written again: ..data %s → %s", first, again)
	}

	// Rotated, one file gone: the top-level link goes with it, the old
	// payload too.
	files = map[string]volumeFile{
		"tls.crt": {data: []byte("cert 2"), mode: 0o644},
		"tls.key": {data: []byte("key 2"), mode: 0o600},
	}
	if err := writeAtomic(dir, files); err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"tls.crt": "-rw-r--r-- cert 2", "tls.key": "-rw------- key 2"}
	if diff := cmp.Diff(want, read()); diff != "" {
		t.Errorf("after the update (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("old payload %s still there (%v)", first, err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "tls.crt")); err != nil || target != filepath.Join(dataLink, "tls.crt") {
		t.Errorf("tls.crt links to %q (%v), want through %s", target, err, dataLink)
	}
}
