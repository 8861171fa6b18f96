package resourcemetrics

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/metrics/pkg/apis/metrics"
)

// columns of both tables: which member, then the usage.
var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the pod or node."},
	{Name: "Cluster", Type: "string", Description: "Member cluster the metrics come from."},
	{Name: "CPU", Type: "string", Format: "quantity", Description: "CPU in use, in cores."},
	{Name: "Memory", Type: "string", Format: "quantity", Description: "Memory working set, in bytes."},
	{Name: "Window", Type: "string", Format: "duration", Description: "Interval the usage was measured over."},
}

func podTable(pods ...metrics.PodMetrics) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: columns}
	for i := range pods {
		p := &pods[i]
		var cpu, memory resource.Quantity
		for _, c := range p.Containers {
			cpu.Add(c.Usage[corev1.ResourceCPU])
			memory.Add(c.Usage[corev1.ResourceMemory])
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []any{p.Name, clusterOf(p.ObjectMeta), cpu.String(), memory.String(), p.Window.Duration.String()},
			Object: runtime.RawExtension{Object: p},
		})
	}
	return t
}

func nodeTable(nodes ...metrics.NodeMetrics) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: columns}
	for i := range nodes {
		n := &nodes[i]
		cpu, memory := n.Usage[corev1.ResourceCPU], n.Usage[corev1.ResourceMemory]
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []any{n.Name, clusterOf(n.ObjectMeta), cpu.String(), memory.String(), n.Window.Duration.String()},
			Object: runtime.RawExtension{Object: n},
		})
	}
	return t
}
