package nodeagent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// volumeFile is one file of a Secret, ConfigMap, downward API or projected
// volume, at a path relative to the volume.
type volumeFile struct {
	data []byte
	mode fs.FileMode
}

// Names of the atomic directory layout, the kubelet's: the payload is in a
// hidden directory, ..data links to it, and each top-level entry is a link
// through ..data.
const (
	dataLink    = "..data"
	dataLinkTmp = "..data_tmp"
)

// writeAtomic makes dir hold exactly files, switching from the previous
// payload to the new one in one rename, as the kubelet does: a reader sees
// either every old file or every new one, never a mix, which is what lets a
// server reload a certificate and its key as a pair. It writes nothing when
// the payload is unchanged.
func writeAtomic(dir string, files map[string]volumeFile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	oldTarget, err := os.Readlink(filepath.Join(dir, dataLink))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if oldTarget != "" && sameFiles(filepath.Join(dir, oldTarget), files) {
		return nil
	}

	payload, err := os.MkdirTemp(dir, "..payload-")
	if err != nil {
		return err
	}
	if err := os.Chmod(payload, 0o755); err != nil {
		return err
	}
	for name, f := range files {
		p := filepath.Join(payload, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			return err
		}
		// WriteFile's mode is filtered by the umask.
		if err := os.Chmod(p, f.mode); err != nil {
			return err
		}
	}
	tmp := filepath.Join(dir, dataLinkTmp)
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(payload), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, dataLink)); err != nil {
		return err
	}

	// Top-level links: new ones made, stale ones removed.
	top := map[string]bool{}
	for name := range files {
		top[strings.SplitN(filepath.ToSlash(name), "/", 2)[0]] = true
	}
	for name := range top {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join(dataLink, name), link); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") || top[e.Name()] || e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	if oldTarget != "" {
		return os.RemoveAll(filepath.Join(dir, oldTarget))
	}
	return nil
}

// sameFiles reports whether dir holds exactly files, contents and modes.
func sameFiles(dir string, files map[string]volumeFile) bool {
	seen := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f, ok := files[filepath.ToSlash(rel)]
		if !ok {
			return fmt.Errorf("%s is not in the payload", rel)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if info.Mode().Perm() != f.mode.Perm() || !bytes.Equal(data, f.data) {
			return fmt.Errorf("%s changed", rel)
		}
		seen++
		return nil
	})
	return err == nil && seen == len(files)
}
