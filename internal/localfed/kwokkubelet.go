package localfed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A member's API server serves pods/log, pods/exec and pods/attach by
// calling the kubelet of the pod's node; in a member that kubelet is kwok.
// kwok's server answers the kubelet's paths on kwokPort, every node points
// there (InternalIP 127.0.0.1, status.daemonEndpoints.kubeletEndpoint.port),
// and the API server calls it as it calls a kubelet: TLS, checking kwok's
// certificate against the member's CA, with a client certificate of its own.
//
// kwok starts no containers, so what they show is a stand-in:
//   - logs of any container: the member's container output file, in the CRI
//     log format a kubelet reads (AppendContainerOutput adds to it);
//   - attach to any container: the same file, followed from its end;
//   - exec in any container: the command runs on this machine, as the user
//     who started the federation, in the member's exec directory.
//
// kwok's server does not authenticate its callers: anyone who can open
// 127.0.0.1:<kwokPort> can run commands as that user. A local federation
// is one user's own, on their own machine; on a machine shared with other
// users that is worth knowing.
const (
	fileKwokServingCert   = "kwok-serving.crt"
	fileKwokServingKey    = "kwok-serving.key"
	fileKubeletClientCert = "kubelet-client.crt"
	fileKubeletClientKey  = "kubelet-client.key"
	// kubeletClientName is the API server's identity towards kubelets,
	// kubeadm's name for it.
	kubeletClientName = "kube-apiserver-kubelet-client"

	// dirContainers holds the container output alone: kwok follows the
	// file with a watch on its directory, which nothing else should wake.
	dirContainers       = "containers"
	fileContainerOutput = "output.log"
	// dirExec is the working directory of commands run by exec.
	dirExec = "exec"
)

// prepareKubelet gives a member what its API server and kwok need to talk
// as API server and kubelet: kwok's port, kwok's serving certificate for
// 127.0.0.1 and the API server's client certificate, both of the member's
// CA, and the container output and exec directory. A restarted member keeps
// all of them: its nodes name the port.
func (f *Federation) prepareKubelet(c *Cluster) error {
	port, err := f.ports.next()
	if err != nil {
		return err
	}
	c.kwokPort = port
	serving, err := c.ca.issue(certRequest{
		commonName: binKwok,
		server:     true,
		ips:        []net.IP{net.IPv4(127, 0, 0, 1)},
		dnsNames:   []string{"localhost"},
	})
	if err != nil {
		return err
	}
	client, err := c.ca.issue(certRequest{commonName: kubeletClientName})
	if err != nil {
		return err
	}
	for file, data := range map[string][]byte{
		fileKwokServingCert:   serving.certPEM,
		fileKwokServingKey:    serving.keyPEM,
		fileKubeletClientCert: client.certPEM,
		fileKubeletClientKey:  client.keyPEM,
	} {
		if err := os.WriteFile(c.path(file), data, 0o600); err != nil {
			return fmt.Errorf("writing %s of %s: %w", file, c.Name, err)
		}
	}
	for _, dir := range []string{dirContainers, dirExec} {
		if err := os.MkdirAll(c.path(dir), 0o700); err != nil {
			return fmt.Errorf("creating %s directory of %s: %w", dir, c.Name, err)
		}
	}
	return c.AppendContainerOutput(
		c.Name+": kwok simulates this member's pods and runs no containers.",
		"This output stands in for every container's; exec runs commands on the machine of the federation.",
	)
}

// kubeletClientArgs are a member API server's flags for calling kwok as its
// kubelets. The nodes' only address it may use is InternalIP: the
// hostname is a node name that no resolver knows.
func (c *Cluster) kubeletClientArgs() []string {
	return []string{
		"--kubelet-client-certificate=" + c.path(fileKubeletClientCert),
		"--kubelet-client-key=" + c.path(fileKubeletClientKey),
		"--kubelet-certificate-authority=" + c.path(fileCA),
		"--kubelet-preferred-address-types=InternalIP",
	}
}

// kwokStreamingConfig is kwok's configuration of logs, attach and exec for
// every pod of the member.
func (c *Cluster) kwokStreamingConfig() []byte {
	output := quoteYAML(c.containerOutputPath())
	return []byte(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: localfed-logs
spec:
  logs:
  - logsFile: ` + output + `
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterAttach
metadata:
  name: localfed-attach
spec:
  attaches:
  - logsFile: ` + output + `
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: localfed-exec
spec:
  execs:
  - local:
      workDir: ` + quoteYAML(c.path(dirExec)) + `
`)
}

// quoteYAML quotes s as a JSON string, which YAML reads as the same string.
func quoteYAML(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

func (c *Cluster) containerOutputPath() string {
	return filepath.Join(c.dir, dirContainers, fileContainerOutput)
}

// AppendContainerOutput adds lines to what every container of the member
// shows: `kubectl logs` prints them and `kubectl attach` streams them as
// they come. A line with newlines becomes several. It needs a member with
// kwok (not Options.APIServerOnlyMembers).
func (c *Cluster) AppendContainerOutput(lines ...string) error {
	if _, err := os.Stat(filepath.Dir(c.containerOutputPath())); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("appending container output of %s: the cluster runs no kwok", c.Name)
	}
	var b strings.Builder
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, line := range lines {
		for l := range strings.SplitSeq(line, "\n") {
			// The CRI log format: time, stream, F for a full line, text.
			fmt.Fprintf(&b, "%s stdout F %s\n", now, l)
		}
	}
	file, err := os.OpenFile(c.containerOutputPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("appending container output of %s: %w", c.Name, err)
	}
	// One write, so that concurrent appends do not interleave lines.
	_, err = file.WriteString(b.String())
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return fmt.Errorf("appending container output of %s: %w", c.Name, err)
	}
	return nil
}
