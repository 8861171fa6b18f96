package lua

import (
	glua "github.com/yuin/gopher-lua"

	"github.com/flotilla-io/flotilla/internal/podrequests"
)

// kubeAccuratePodRequirements returns what one replica of a pod template
// needs from a node:
//
//	{nodeClaim={nodeSelector=..., tolerations=..., hardNodeAffinity=...},
//	 resourceRequest={cpu="250m", memory="64Mi", ...}, priorityClassName=...}
//
// Empty parts are left out, and the result is nil when neither a node claim
// nor a resource request remains (as in Karmada).
func kubeAccuratePodRequirements(L *glua.LState) int {
	const fn = "kube.accuratePodRequirements"
	if L.GetTop() != 1 {
		L.RaiseError("%s: expected 1 argument (a pod template), got %d", fn, L.GetTop())
	}
	spec := templateSpec(L, fn, L.CheckTable(1))
	req, err := replicaRequirements(spec)
	if err != nil {
		L.RaiseError("%s: pod template spec.%v", fn, err)
	}
	if req == nil {
		L.Push(glua.LNil)
		return 1
	}
	lv, err := ToLua(L, req)
	if err != nil {
		L.RaiseError("%s: %v", fn, err)
	}
	L.Push(lv)
	return 1
}

// templateSpec returns tpl.spec as Go values. Untouched argument tables are
// read in place (shared, not copied): a template passed straight from the
// object costs no conversion.
func templateSpec(L *glua.LState, fn string, tpl *glua.LTable) map[string]any {
	v, _, cerr := decoder{share: true}.from(tpl, nil, 0)
	if cerr != nil {
		L.RaiseError("%s: pod template: %v", fn, cerr.toError())
	}
	tplMap, _ := v.(map[string]any)
	spec, _ := tplMap["spec"].(map[string]any)
	return spec
}

// replicaRequirements computes the requirements from an unstructured pod
// spec. The resource request is the template's effective request
// (podrequests.ForTemplate) written as Karmada writes it; the node claim
// parts are passed on as they are.
func replicaRequirements(spec map[string]any) (map[string]any, error) {
	requests, err := podrequests.FormattedTemplateFromUnstructured(spec)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	claim := map[string]any{}
	if m, ok := spec["nodeSelector"].(map[string]any); ok && len(m) > 0 {
		claim["nodeSelector"] = m
	}
	if l, ok := spec["tolerations"].([]any); ok && len(l) > 0 {
		claim["tolerations"] = l
	}
	if hard := nested(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"); hard != nil {
		claim["hardNodeAffinity"] = hard
	}
	if len(claim) > 0 {
		out["nodeClaim"] = claim
	}
	if len(requests) > 0 {
		rr := make(map[string]any, len(requests))
		for name, q := range requests {
			rr[string(name)] = q.String()
		}
		out["resourceRequest"] = rr
	}
	if len(out) == 0 {
		return nil, nil
	}
	if pc, ok := spec["priorityClassName"].(string); ok && pc != "" {
		out["priorityClassName"] = pc
	}
	return out, nil
}

func nested(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}
