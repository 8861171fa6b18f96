package localfed

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
)

// etcdCluster names etcd's log directory; every API server of the federation
// stores in this one etcd under its own --etcd-prefix, which saves a process
// per cluster and its start time.
const etcdCluster = "etcd"

// startEtcd starts the federation's etcd and waits until it is healthy. It
// listens on plain HTTP on 127.0.0.1 only.
func (f *Federation) startEtcd(ctx context.Context) error {
	return retryPortRace(ctx, "etcd", func() error {
		clientPort, err := f.ports.next()
		if err != nil {
			return err
		}
		peerPort, err := f.ports.next()
		if err != nil {
			return err
		}
		clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
		p, err := f.sup.start(ctx, processSpec{
			cluster:   etcdCluster,
			component: binEtcd,
			binary:    filepath.Join(f.BinDir, binEtcd),
			args: []string{
				"--name=localfed",
				// A fresh directory per attempt: a half-initialised one from an
				// attempt that lost its port would refuse the new peer URL.
				"--data-dir=" + filepath.Join(f.WorkDir, etcdCluster, fmt.Sprintf("data-%d", clientPort)),
				"--listen-client-urls=" + clientURL,
				"--advertise-client-urls=" + clientURL,
				"--listen-peer-urls=" + peerURL,
				"--initial-advertise-peer-urls=" + peerURL,
				"--initial-cluster=localfed=" + peerURL,
				// Throwaway data: fsync would only make every write wait for
				// the disk, which on a busy CI machine dominates.
				"--unsafe-no-fsync",
				"--log-level=warn",
			},
			tier: tierStorage,
		})
		if err != nil {
			return err
		}
		if err := waitFor(ctx, "etcd health", etcdHealthy(clientURL), p); err != nil {
			return err
		}
		f.etcdURL = clientURL
		return nil
	})
}

func etcdHealthy(url string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return false, err
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
			return false, fmt.Errorf("etcd /health: %s: %s", resp.Status, body)
		}
		return true, nil
	}
}
