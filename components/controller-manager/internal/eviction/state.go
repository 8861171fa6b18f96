package eviction

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/client-go/util/jsonpath"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// PreservedState evaluates statePreservation rules against the status
// the evicted cluster last reported for the workload, giving the labels
// its replacement carries. A rule whose path selects nothing is an error
// naming it: failing over without the state the user asked to keep would
// lose it.
func PreservedState(rules []policyv1alpha1.StatePreservationRule, items []workv1alpha2.AggregatedStatusItem, cluster string) (map[string]string, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	var status any
	for _, item := range items {
		if item.ClusterName == cluster && item.Status != nil {
			if err := json.Unmarshal(item.Status.Raw, &status); err != nil {
				return nil, fmt.Errorf("decoding the status cluster %s reported: %w", cluster, err)
			}
			break
		}
	}
	if status == nil {
		return nil, fmt.Errorf("cluster %s reported no status to preserve state from", cluster)
	}
	out := make(map[string]string, len(rules))
	for i, r := range rules {
		jp := jsonpath.New(r.AliasLabelName)
		if err := jp.Parse(r.JSONPath); err != nil {
			return nil, fmt.Errorf("statePreservation.rules[%d].jsonPath %q: %w", i, r.JSONPath, err)
		}
		var buf bytes.Buffer
		if err := jp.Execute(&buf, status); err != nil {
			return nil, fmt.Errorf("statePreservation.rules[%d].jsonPath %q on the status of cluster %s: %w", i, r.JSONPath, cluster, err)
		}
		out[r.AliasLabelName] = buf.String()
	}
	return out, nil
}
