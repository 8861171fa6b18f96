package lua

import (
	"math"
	"strconv"
	"strings"

	glua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/api/resource"
)

// newKubeLibrary builds the table returned by require("kube"), with the same
// functions and results as Karmada's kube library.
func newKubeLibrary(L *glua.LState) *glua.LTable {
	lib := L.CreateTable(0, 4)
	lib.RawSetString("resourceAdd", L.NewFunction(kubeResourceAdd))
	lib.RawSetString("getResourceQuantity", L.NewFunction(kubeGetResourceQuantity))
	lib.RawSetString("accuratePodRequirements", L.NewFunction(kubeAccuratePodRequirements))
	lib.RawSetString("getPodDependencies", L.NewFunction(kubeGetPodDependencies))
	return lib
}

// kubeResourceAdd sums quantities and returns the sum as a quantity string,
// e.g. resourceAdd("1Gi", "512Mi") == "1536Mi". nil arguments count as zero.
func kubeResourceAdd(L *glua.LState) int {
	var sum resource.Quantity
	for i := 1; i <= L.GetTop(); i++ {
		if q, ok := quantityArg(L, "kube.resourceAdd", i); ok {
			sum.Add(q)
		}
	}
	L.Push(glua.LString(sum.String()))
	return 1
}

// kubeGetResourceQuantity returns a quantity's value as a number:
// "100m" → 0.1, "1Gi" → 1073741824.
func kubeGetResourceQuantity(L *glua.LState) int {
	q, _ := quantityArg(L, "kube.getResourceQuantity", 1)
	L.Push(glua.LNumber(q.AsApproximateFloat64()))
	return 1
}

// quantityArg reads argument i as a quantity: a string such as "100m", or a
// number. It reports false for nil.
func quantityArg(L *glua.LState, fn string, i int) (resource.Quantity, bool) {
	switch v := L.Get(i).(type) {
	case *glua.LNilType:
		return resource.Quantity{}, false
	case glua.LString:
		q, err := resource.ParseQuantity(strings.TrimSpace(string(v)))
		if err != nil {
			L.RaiseError("%s: argument #%d: invalid quantity %q: %v", fn, i, string(v), err)
		}
		return q, true
	case glua.LNumber:
		f := float64(v)
		if f == math.Trunc(f) && math.Abs(f) < maxExactInt {
			return *resource.NewQuantity(int64(f), resource.DecimalSI), true
		}
		q, err := resource.ParseQuantity(strconv.FormatFloat(f, 'f', -1, 64))
		if err != nil {
			L.RaiseError("%s: argument #%d: invalid quantity %v: %v", fn, i, f, err)
		}
		return q, true
	default:
		L.RaiseError("%s: argument #%d: expected a quantity string or number, got %s", fn, i, v.Type())
	}
	return resource.Quantity{}, false
}
