package nodeagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// An agent's addresses are one block 127.<n>.0.0/16, n from ipBlockFirst to
// ipBlockLast: pods from 127.<n>.0.1 up, and Service addresses it allocates
// itself (for ClusterIPs outside 127.0.0.0/8) from 127.<n>.128.1 up. Agents
// running at once on this machine, in parallel test binaries, each claim a
// block by listening on ipBlockClaimPort of 127.<n>.255.254; the claim ends
// with the listener or the process. localfed's host clusters take their
// Service ranges from 127.96.0.0/16 on, above these.
const (
	ipBlockFirst     = 1
	ipBlockLast      = 63
	ipBlockClaimPort = 64999
)

// ipBlock hands out the addresses of the agent's block.
type ipBlock struct {
	n     int
	claim net.Listener

	mu   sync.Mutex
	used map[string]bool
	// next are the offsets to try first in the pod and the Service halves: a
	// released address is taken again only after the others, so that a new
	// pod does not inherit an old one's connections.
	next [2]int
}

func claimIPBlock() (*ipBlock, error) {
	for n := ipBlockFirst; n <= ipBlockLast; n++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.%d.255.254:%d", n, ipBlockClaimPort))
		if errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("claiming a loopback block: %w", err)
		}
		return &ipBlock{n: n, claim: l, used: map[string]bool{}}, nil
	}
	return nil, fmt.Errorf("every loopback block 127.%d.0.0/16 … 127.%d.0.0/16 is claimed by another agent", ipBlockFirst, ipBlockLast)
}

func (b *ipBlock) String() string { return fmt.Sprintf("127.%d.0.0/17", b.n) }

// podIP allocates a pod address.
func (b *ipBlock) podIP() (string, error) { return b.allocate(0) }

// serviceIP allocates a Service address.
func (b *ipBlock) serviceIP() (string, error) { return b.allocate(1) }

func (b *ipBlock) allocate(half int) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	const halfSize = 1 << 15
	for range halfSize {
		b.next[half] = (b.next[half] + 1) % halfSize
		addr := half*halfSize + b.next[half]
		ip := fmt.Sprintf("127.%d.%d.%d", b.n, addr>>8, addr&0xff)
		// .0 and .255 in the last octet are skipped, which some programs
		// take for network or broadcast addresses, and so is the claim's.
		if addr&0xff == 0 || addr&0xff == 0xff || addr == 0xfffe || b.used[ip] {
			continue
		}
		b.used[ip] = true
		return ip, nil
	}
	return "", errors.New("no free loopback address left")
}

func (b *ipBlock) free(ip string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.used, ip)
}

func (b *ipBlock) release() { _ = b.claim.Close() }

// network keeps the hosts file and the Service proxies in line with the
// Services of the host cluster and the pods of this node.
type network struct {
	a         *Agent
	hostsPath string
	kickCh    chan struct{}

	syncMu sync.Mutex // one sync at a time

	mu      sync.Mutex
	names   map[string][]string // lower-case name → addresses, for resolve
	proxies map[string]*proxy   // by listen address
	vips    map[types.UID]string
	failed  map[string]string // listen address → error already logged
	closed  bool
}

func newNetwork(a *Agent) *network {
	return &network{
		a:         a,
		hostsPath: filepath.Join(a.opts.Dir, "hosts"),
		kickCh:    make(chan struct{}, 1),
		names:     map[string][]string{},
		proxies:   map[string]*proxy{},
		vips:      map[types.UID]string{},
		failed:    map[string]string{},
	}
}

// changed asks for a sync soon.
func (n *network) changed() { kick(n.kickCh) }

// run syncs on every change, and every few seconds to retry listeners
// that failed.
func (n *network) run(ctx context.Context) {
	ticker := time.NewTicker(5 * time.Second)
	defer ticker.Stop()
	for {
		n.sync()
		select {
		case <-ctx.Done():
			return
		case <-n.kickCh:
		case <-ticker.C:
		}
	}
}

// podView is what the network needs of a pod of this node.
type podView struct {
	pod   *corev1.Pod
	ip    string
	ready bool
}

// sync rewrites the hosts file when it changed and makes the proxies listen
// on every Service port, forwarding to the current endpoints.
func (n *network) sync() {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	if n.a.services == nil {
		return // the caches are not there yet
	}
	services, err := n.a.services.List(labels.Everything())
	if err != nil {
		return
	}
	var pods []podView
	for _, w := range n.a.podWorkers() {
		if v, ok := w.view(); ok {
			pods = append(pods, v)
		}
	}
	domain := n.a.opts.ClusterDomain

	hosts := hostsTable{}
	hosts.add("127.0.0.1", "localhost", n.a.opts.NodeName)
	backends := map[string][]string{} // listen address → endpoints
	headless := map[string]bool{}     // ns/name of headless Services
	seen := map[types.UID]bool{}
	for _, svc := range services {
		names := serviceNames(svc, domain)
		switch {
		case svc.Spec.Type == corev1.ServiceTypeExternalName:
		case svc.Spec.ClusterIP == corev1.ClusterIPNone:
			headless[svc.Namespace+"/"+svc.Name] = true
			for _, p := range endpointPods(svc, pods) {
				hosts.add(p.ip, names...)
			}
		default:
			vip, err := n.serviceIP(svc)
			if err != nil {
				n.logOnce("vip/"+string(svc.UID), err)
				continue
			}
			seen[svc.UID] = true
			hosts.add(vip, names...)
			for _, port := range svc.Spec.Ports {
				if port.Protocol != corev1.ProtocolTCP && port.Protocol != "" {
					continue
				}
				eps := n.endpoints(svc, port, pods)
				backends[net.JoinHostPort(vip, strconv.Itoa(int(port.Port)))] = eps
				if port.NodePort != 0 {
					backends[net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port.NodePort)))] = eps
				}
			}
		}
	}
	// A pod with a hostname and a subdomain that names a headless Service
	// has a name of its own, as StatefulSet pods do.
	for _, p := range pods {
		spec := p.pod.Spec
		if spec.Hostname != "" && spec.Subdomain != "" && headless[p.pod.Namespace+"/"+spec.Subdomain] {
			hosts.add(p.ip, fmt.Sprintf("%s.%s.%s.svc.%s", spec.Hostname, spec.Subdomain, p.pod.Namespace, domain))
		}
	}

	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	for uid, ip := range n.vips {
		if !seen[uid] {
			n.a.block.free(ip)
			delete(n.vips, uid)
		}
	}
	n.names = hosts.names()
	if err := writeInPlace(n.hostsPath, hosts.render(n.a.opts.NodeName)); err != nil {
		n.a.log.Error(err, "Writing the hosts file")
	}
	n.reconcileProxies(backends)
}

// serviceIP is the Service's address on this machine: its ClusterIP when it
// is a loopback address, else one the agent allocates and keeps.
func (n *network) serviceIP(svc *corev1.Service) (string, error) {
	if ip := net.ParseIP(svc.Spec.ClusterIP); ip != nil && ip.IsLoopback() {
		return svc.Spec.ClusterIP, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if ip, ok := n.vips[svc.UID]; ok {
		return ip, nil
	}
	ip, err := n.a.block.serviceIP()
	if err != nil {
		return "", err
	}
	n.vips[svc.UID] = ip
	return ip, nil
}

// endpoints are the pod addresses a Service port forwards to: pods of its
// namespace that match its selector, have an IP and are Ready (or any, with
// publishNotReadyAddresses), at the target port by number or by the name of
// a container port. default/kubernetes, which has no selector, forwards to
// the host's API server.
func (n *network) endpoints(svc *corev1.Service, port corev1.ServicePort, pods []podView) []string {
	if svc.Namespace == metav1.NamespaceDefault && svc.Name == "kubernetes" {
		return []string{n.a.apiAddress}
	}
	var eps []string
	for _, p := range endpointPods(svc, pods) {
		if target, ok := targetPort(p.pod, port); ok {
			eps = append(eps, net.JoinHostPort(p.ip, strconv.Itoa(int(target))))
		}
	}
	slices.Sort(eps)
	return eps
}

// endpointPods are the pods a Service selects and would publish.
func endpointPods(svc *corev1.Service, pods []podView) []podView {
	if len(svc.Spec.Selector) == 0 {
		return nil
	}
	selector := labels.SelectorFromSet(svc.Spec.Selector)
	var out []podView
	for _, p := range pods {
		if p.pod.Namespace == svc.Namespace && p.ip != "" && p.pod.DeletionTimestamp == nil &&
			(p.ready || svc.Spec.PublishNotReadyAddresses) && selector.Matches(labels.Set(p.pod.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

// targetPort resolves a Service port's target in a pod.
func targetPort(pod *corev1.Pod, port corev1.ServicePort) (int32, bool) {
	switch {
	case port.TargetPort.StrVal != "":
		return containerPort(pod, port.TargetPort.StrVal)
	case port.TargetPort.IntVal != 0:
		return port.TargetPort.IntVal, true
	}
	return port.Port, true
}

// containerPort finds a named port among a pod's containers.
func containerPort(pod *corev1.Pod, name string) (int32, bool) {
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, p := range c.Ports {
			if p.Name == name {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

// serviceNames are the names a Service answers to from a pod.
func serviceNames(svc *corev1.Service, domain string) []string {
	base := svc.Name + "." + svc.Namespace
	return []string{base + ".svc." + domain, base + ".svc", base}
}

// reconcileProxies listens where backends says, closes listeners no longer
// wanted and hands each proxy its current endpoints. Call with n.mu held.
func (n *network) reconcileProxies(backends map[string][]string) {
	for addr, p := range n.proxies {
		if _, ok := backends[addr]; !ok {
			p.close()
			delete(n.proxies, addr)
		}
	}
	for addr, eps := range backends {
		p, ok := n.proxies[addr]
		if !ok {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				n.logOnceLocked(addr, err)
				continue
			}
			delete(n.failed, addr)
			p = &proxy{l: l}
			n.proxies[addr] = p
			go p.serve()
		}
		p.setBackends(eps)
	}
}

func (n *network) logOnce(key string, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.logOnceLocked(key, err)
}

func (n *network) logOnceLocked(key string, err error) {
	if n.failed[key] != err.Error() {
		n.failed[key] = err.Error()
		n.a.log.Error(err, "Service proxy", "key", key)
	}
}

// resolve looks a name up as the hosts file does.
func (n *network) resolve(host string) (string, bool) {
	if ip := net.ParseIP(host); ip != nil {
		return host, true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	addrs := n.names[strings.ToLower(strings.TrimSuffix(host, "."))]
	if len(addrs) == 0 {
		return "", false
	}
	return addrs[0], true
}

// close stops every proxy.
func (n *network) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	for addr, p := range n.proxies {
		p.close()
		delete(n.proxies, addr)
	}
}

// hostsTable maps addresses to names, in the order first seen.
type hostsTable struct {
	order []string
	byIP  map[string][]string
}

func (t *hostsTable) add(ip string, names ...string) {
	if t.byIP == nil {
		t.byIP = map[string][]string{}
	}
	if _, ok := t.byIP[ip]; !ok {
		t.order = append(t.order, ip)
	}
	for _, name := range names {
		if !slices.Contains(t.byIP[ip], name) {
			t.byIP[ip] = append(t.byIP[ip], name)
		}
	}
}

// names inverts the table for lookups.
func (t *hostsTable) names() map[string][]string {
	out := map[string][]string{}
	for _, ip := range t.order {
		for _, name := range t.byIP[ip] {
			out[strings.ToLower(name)] = append(out[strings.ToLower(name)], ip)
		}
	}
	return out
}

// render writes the table as /etc/hosts, sorted by address after localhost.
func (t *hostsTable) render(node string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Services and pods of node %s, kept by the flotilla test node agent.\n", node)
	ips := slices.Clone(t.order)
	slices.SortStableFunc(ips[1:], func(x, y string) int {
		return bytes.Compare(net.ParseIP(x).To16(), net.ParseIP(y).To16())
	})
	for _, ip := range ips {
		fmt.Fprintf(&b, "%s\t%s\n", ip, strings.Join(t.byIP[ip], " "))
	}
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	return b.Bytes()
}

// writeInPlace makes path hold data by overwriting the file itself, never
// replacing it: the processes see it through bind mounts, which hold on to
// the inode. Unchanged content is not written.
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	old, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	if bytes.Equal(old, data) {
		return nil
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(data)))
}

// proxy forwards the connections to one Service port, round robin over its
// endpoints, as kube-proxy's userspace mode did.
type proxy struct {
	l net.Listener

	mu       sync.Mutex
	backends []string
	next     int
	conns    map[net.Conn]bool
	closed   bool
}

func (p *proxy) setBackends(eps []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backends = eps
}

// pick returns the endpoints in the order to try them.
func (p *proxy) pick() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.backends) == 0 {
		return nil
	}
	start := p.next % len(p.backends)
	p.next++
	return slices.Concat(p.backends[start:], p.backends[:start])
}

func (p *proxy) serve() {
	for {
		conn, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.forward(conn)
	}
}

// forward connects conn to the first endpoint that answers. With none, conn
// is reset, as a connection to a Service without endpoints is refused.
func (p *proxy) forward(conn net.Conn) {
	var upstream net.Conn
	for _, ep := range p.pick() {
		c, err := net.DialTimeout("tcp", ep, 3*time.Second)
		if err == nil {
			upstream = c
			break
		}
	}
	if upstream == nil {
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
		}
		_ = conn.Close()
		return
	}
	if !p.track(conn, upstream) {
		return
	}
	defer p.untrack(conn, upstream)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tcp, ok := dst.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(upstream, conn)
	go pipe(conn, upstream)
	<-done
	<-done
}

// track records a forwarded pair so that close can end it; it reports false
// (and closes both) when the proxy is closed already.
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	if p.conns == nil {
		p.conns = map[net.Conn]bool{}
	}
	for _, c := range conns {
		p.conns[c] = true
	}
	return true
}

func (p *proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// close stops listening and ends the connections in flight.
func (p *proxy) close() {
	_ = p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
}
