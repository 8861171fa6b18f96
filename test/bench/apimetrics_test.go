package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// requestKey names a kind of write to the control plane.
type requestKey struct {
	verb, resource, subresource string
}

func (k requestKey) String() string {
	s := k.verb + " " + k.resource
	if k.subresource != "" {
		s += "/" + k.subresource
	}
	return s
}

// writeCounts counts the control plane's requests (successful or not) by
// verb, resource and subresource, from apiserver_request_total; watches
// aside.
type writeCounts map[requestKey]float64

var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true, "APPLY": true}

// scrapeWrites reads the control plane's /metrics.
func scrapeWrites(ctx context.Context, kube kubernetes.Interface) (writeCounts, error) {
	body, err := kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's /metrics: %w", err)
	}
	return parseWrites(string(body)), nil
}

// scrapeMemberWrites sums the members' request counts.
func (e *env) scrapeMemberWrites(ctx context.Context) (writeCounts, error) {
	sum := writeCounts{}
	for _, m := range e.members {
		counts, err := scrapeWrites(ctx, m.kube)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		for k, v := range counts {
			sum[k] += v
		}
	}
	return sum, nil
}

// parseWrites sums apiserver_request_total over status codes, leaving out
// watches.
func parseWrites(text string) writeCounts {
	counts := writeCounts{}
	for line := range strings.SplitSeq(text, "\n") {
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		end := strings.LastIndexByte(rest, '}')
		if end < 0 {
			continue
		}
		labels := parseLabels(rest[:end])
		if labels["verb"] == "WATCH" {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[end+1:]), 64)
		if err != nil {
			continue
		}
		counts[requestKey{verb: labels["verb"], resource: labels["resource"], subresource: labels["subresource"]}] += v
	}
	return counts
}

// parseLabels reads name="value" pairs; the values apiserver_request_total
// carries have no escaped quotes or commas.
func parseLabels(s string) map[string]string {
	labels := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(pair, "=")
		if ok {
			labels[name] = strings.Trim(value, `"`)
		}
	}
	return labels
}

// minus is what happened between before and w.
func (w writeCounts) minus(before writeCounts) writeCounts {
	d := writeCounts{}
	for k, v := range w {
		if n := v - before[k]; n > 0 {
			d[k] = n
		}
	}
	return d
}

// withoutEvents leaves out the Events the components record: Karmada records
// the same ones, so they are the part of the writes conformance fixes.
func (w writeCounts) withoutEvents() writeCounts {
	d := writeCounts{}
	for k, v := range w {
		if k.resource != "events" {
			d[k] = v
		}
	}
	return d
}

// withoutLeases leaves out lease renewals, which go on at a steady rate
// whatever the federation does.
func (w writeCounts) withoutLeases() writeCounts {
	d := writeCounts{}
	for k, v := range w {
		if k.resource != "leases" {
			d[k] = v
		}
	}
	return d
}

// total is the number of writes.
func (w writeCounts) total() float64 {
	var n float64
	for k, v := range w {
		if writeVerbs[k.verb] {
			n += v
		}
	}
	return n
}

// table lists the writes, most first, with their count per template.
func (w writeCounts) table(templates int) string {
	keys := slices.SortedFunc(maps.Keys(w), func(a, b requestKey) int {
		if w[a] != w[b] {
			if w[a] > w[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a.String(), b.String())
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-45s %8.0f  %6.2f/template\n", k, w[k], w[k]/float64(templates))
	}
	return b.String()
}
