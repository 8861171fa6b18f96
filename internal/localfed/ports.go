package localfed

import (
	"fmt"
	"net"
	"sync"
)

// portAllocator hands out free TCP ports on 127.0.0.1, never the same one
// twice, since the kernel may offer a just-closed port again before the process
// it was meant for has bound it.
type portAllocator struct {
	mu    sync.Mutex
	given map[int]bool
}

func newPortAllocator() *portAllocator {
	return &portAllocator{given: map[int]bool{}}
}

// next returns a port that was free a moment ago. Another program may still
// take it first; starts that lose that race are retried with new ports.
func (a *portAllocator) next() (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !a.given[port] {
			a.given[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("finding a free port: none new after 100 tries")
}

// ports returns every port handed out.
func (a *portAllocator) ports() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	ports := make([]int, 0, len(a.given))
	for p := range a.given {
		ports = append(ports, p)
	}
	return ports
}
