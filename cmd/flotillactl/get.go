package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// operationScope is karmadactl's --operation-scope: the control plane,
// the members, or both.
type operationScope string

const (
	scopeKarmada operationScope = "karmada"
	scopeMembers operationScope = "members"
	scopeAll     operationScope = "all"
)

func (s *operationScope) String() string { return string(*s) }
func (s *operationScope) Type() string   { return "operationScope" }
func (s *operationScope) Set(v string) error {
	switch operationScope(v) {
	case scopeKarmada, scopeMembers, scopeAll:
		*s = operationScope(v)
		return nil
	}
	return fmt.Errorf(`--operation-scope: %q is not one of "karmada", "members", "all"`, v)
}

// controlPlaneRow is the CLUSTER cell of the control plane's objects, as
// karmadactl prints it.
const controlPlaneRow = "Karmada"

// getOptions are the flags of get.
type getOptions struct {
	flags          *genericclioptions.ConfigFlags
	print          *genericclioptions.PrintFlags
	scope          operationScope
	clusters       []string
	selector       string
	fieldSelector  string
	allNamespaces  bool
	ignoreNotFound bool
	showLabels     bool
	labelColumns   []string
}

func newGetCommand() *cobra.Command {
	o := &getOptions{scope: scopeKarmada, print: genericclioptions.NewPrintFlags("")}
	cmd := &cobra.Command{
		Use:   "get [(-o|--output=)json|yaml|name|wide|jsonpath=...] (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ...) [flags]",
		Short: "Display resources of the control plane and of member clusters",
		Long: `Display one or many resources, from the control plane (--operation-scope karmada,
the default), from member clusters (members) or from both (all), side by side
with a CLUSTER column. Members are reached through the control plane's cluster
proxy (clusters/proxy), as the user of the kubeconfig: what the member's RBAC
lets that user see is what is shown. Objects the control plane propagated show
ADOPTION Y.`,
		Example: `  # Deployments in the control plane and in every member
  flotillactl get deployments --operation-scope all

  # Pods of member1 and member2, wide
  flotillactl get pods --operation-scope members --clusters member1,member2 -o wide`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		},
	}
	o.flags = genericclioptions.NewConfigFlags(true)
	o.flags.AddFlags(cmd.Flags())
	o.print.AddFlags(cmd)
	fs := cmd.Flags()
	fs.Var(&o.scope, "operation-scope", `Where to look: "karmada" (the control plane), "members" or "all".`)
	fs.StringSliceVarP(&o.clusters, "clusters", "C", nil, "Members to look in, e.g. -C=member1,member2; all members by default. Only with --operation-scope members or all.")
	fs.StringVarP(&o.selector, "selector", "l", "", "Label selector to filter on, e.g. -l key1=value1,key2=value2.")
	fs.StringVar(&o.fieldSelector, "field-selector", "", "Field selector to filter on, e.g. --field-selector metadata.name=nginx.")
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "List across all namespaces.")
	fs.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "A named object that does not exist is not an error.")
	fs.BoolVar(&o.showLabels, "show-labels", false, "Show all labels as the last column.")
	fs.StringSliceVarP(&o.labelColumns, "label-columns", "L", nil, "Labels to show as columns.")
	return cmd
}

// target is one place objects are read from: the control plane or a member
// through its proxy.
type target struct {
	name   string
	getter genericclioptions.RESTClientGetter
}

func (o *getOptions) run(ctx context.Context, out, errOut io.Writer, args []string) error {
	if len(o.clusters) > 0 && o.scope == scopeKarmada {
		return errors.New("--clusters: only with --operation-scope members or all")
	}
	targets, err := o.targets(ctx)
	if err != nil {
		return err
	}
	namespace, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fmt.Errorf("reading the namespace of the kubeconfig: %w", err)
	}
	format := ""
	if o.print.OutputFormat != nil {
		format = *o.print.OutputFormat
	}
	tables := format == "" || format == "wide"
	var errs []error
	var found []foundObject
	for _, t := range targets {
		infos, err := o.fetch(t, namespace, tables, args)
		if err != nil {
			// One member that cannot be read does not hide the others.
			errs = append(errs, fmt.Errorf("cluster %s: %w", t.name, err))
		}
		for _, info := range infos {
			found = append(found, foundObject{cluster: t.name, info: info})
		}
	}
	if tables {
		err = o.printTables(out, found)
	} else {
		err = o.printObjects(out, found)
	}
	if len(found) == 0 && len(errs) == 0 && o.selector != "" || len(found) == 0 && len(errs) == 0 && len(args) == 1 && !strings.Contains(args[0], "/") {
		fmt.Fprintln(errOut, "No resources found")
	}
	return errors.Join(append(errs, err)...)
}

type foundObject struct {
	cluster string
	info    *resource.Info
}

// targets lists where to read: the control plane and or the members named
// by --clusters (all of them when none is named).
func (o *getOptions) targets(ctx context.Context) ([]target, error) {
	var out []target
	if o.scope == scopeKarmada || o.scope == scopeAll {
		out = append(out, target{name: controlPlaneRow, getter: o.flags})
	}
	if o.scope == scopeKarmada {
		return out, nil
	}
	names := o.clusters
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	c, err := controlPlaneFlags{o.flags}.client()
	if err != nil {
		return nil, err
	}
	var clusters clusterv1alpha1.ClusterList
	if err := c.List(ctx, &clusters); err != nil {
		return nil, fmt.Errorf("listing the member clusters: %w", err)
	}
	known := map[string]bool{}
	for _, cl := range clusters.Items {
		known[cl.Name] = true
	}
	if len(names) == 0 {
		for _, cl := range clusters.Items {
			names = append(names, cl.Name)
		}
		slices.Sort(names)
	}
	for _, name := range names {
		if !known[name] {
			return nil, fmt.Errorf("--clusters: cluster %q is not a member (see flotillactl get clusters)", name)
		}
		out = append(out, target{name: name, getter: o.memberFlags(cfg, name)})
	}
	return out, nil
}

// memberFlags are the control plane's connection flags with the server
// moved to the member's proxy: the same user, credentials and CA.
func (o *getOptions) memberFlags(cfg *rest.Config, cluster string) *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	f.KubeConfig, f.Context, f.AuthInfoName, f.ClusterName = o.flags.KubeConfig, o.flags.Context, o.flags.AuthInfoName, o.flags.ClusterName
	f.BearerToken, f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup = o.flags.BearerToken, o.flags.Impersonate, o.flags.ImpersonateUID, o.flags.ImpersonateGroup
	f.CAFile, f.CertFile, f.KeyFile, f.Insecure, f.TLSServerName = o.flags.CAFile, o.flags.CertFile, o.flags.KeyFile, o.flags.Insecure, o.flags.TLSServerName
	f.Timeout, f.CacheDir, f.Username, f.Password = o.flags.Timeout, o.flags.CacheDir, o.flags.Username, o.flags.Password
	f.ImpersonateUserExtra, f.DisableCompression, f.ProxyURL = o.flags.ImpersonateUserExtra, o.flags.DisableCompression, o.flags.ProxyURL
	server := clusterProxyURL(cfg.Host, cluster)
	f.APIServer = &server
	return f
}

// clusterProxyURL is the root of a member's API as the control plane
// proxies it.
func clusterProxyURL(controlPlane, cluster string) string {
	return strings.TrimSuffix(controlPlane, "/") + "/apis/" + clusterv1alpha1.GroupVersion.Group + "/" +
		clusterv1alpha1.GroupVersion.Version + "/clusters/" + cluster + "/proxy"
}

// fetch reads what args name from one target, as server-side tables when
// printing tables.
func (o *getOptions) fetch(t target, namespace string, tables bool, args []string) ([]*resource.Info, error) {
	b := resource.NewBuilder(t.getter).Unstructured().
		NamespaceParam(namespace).DefaultNamespace().AllNamespaces(o.allNamespaces).
		LabelSelectorParam(o.selector).FieldSelectorParam(o.fieldSelector).
		ResourceTypeOrNameArgs(true, args...).ContinueOnError().Latest().Flatten()
	if tables {
		b = b.TransformRequests(func(req *rest.Request) {
			req.SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
		})
	}
	infos, err := b.Do().Infos()
	if o.ignoreNotFound {
		err = ignoreNotFound(err)
	}
	return infos, err
}

// ignoreNotFound drops the not-found errors of an aggregate.
func ignoreNotFound(err error) error {
	if err == nil {
		return nil
	}
	var agg interface{ Errors() []error }
	if errors.As(err, &agg) {
		var keep []error
		for _, e := range agg.Errors() {
			if !apierrors.IsNotFound(e) {
				keep = append(keep, e)
			}
		}
		return errors.Join(keep...)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// printTables prints one table per kind, each row with its cluster, and
// for members whether the control plane propagated the object.
func (o *getOptions) printTables(out io.Writer, items []foundObject) error {
	members := o.scope != scopeKarmada
	var kinds []schema.GroupKind
	byKind := map[schema.GroupKind]*metav1.Table{}
	for _, f := range items {
		table, err := asTable(f.info.Object)
		if err != nil {
			return fmt.Errorf("%s in %s: %w", f.info.Mapping.GroupVersionKind.Kind, f.cluster, err)
		}
		gk := f.info.Mapping.GroupVersionKind.GroupKind()
		merged, ok := byKind[gk]
		if !ok {
			merged = &metav1.Table{ColumnDefinitions: withClusterColumns(table.ColumnDefinitions, members)}
			byKind[gk] = merged
			kinds = append(kinds, gk)
		}
		for _, row := range table.Rows {
			if members {
				row.Cells = withClusterCells(row.Cells, f.cluster, adoption(f.cluster, row.Object))
			}
			merged.Rows = append(merged.Rows, row)
		}
	}
	w := printers.GetNewTabWriter(out)
	defer w.Flush()
	for i, gk := range kinds {
		if i > 0 {
			fmt.Fprintln(w)
		}
		p := printers.NewTablePrinter(printers.PrintOptions{
			WithNamespace: o.allNamespaces,
			WithKind:      len(kinds) > 1,
			Kind:          gk,
			Wide:          o.print.OutputFormat != nil && *o.print.OutputFormat == "wide",
			ShowLabels:    o.showLabels,
			ColumnLabels:  o.labelColumns,
		})
		if err := p.PrintObj(byKind[gk], w); err != nil {
			return err
		}
	}
	return nil
}

// asTable reads a server-side table, which the builder decodes as
// unstructured.
func asTable(obj runtime.Object) (*metav1.Table, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetKind() != "Table" {
		return nil, fmt.Errorf("the server did not answer with a table (%T)", obj)
	}
	var table metav1.Table
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &table); err != nil {
		return nil, fmt.Errorf("decoding the table: %w", err)
	}
	for i := range table.Rows {
		if raw := table.Rows[i].Object.Raw; len(raw) > 0 {
			var m metav1.PartialObjectMetadata
			if err := json.Unmarshal(raw, &m); err == nil {
				table.Rows[i].Object.Object = &m
			}
		}
	}
	return &table, nil
}

// withClusterColumns puts CLUSTER after the name and ADOPTION last.
func withClusterColumns(cols []metav1.TableColumnDefinition, members bool) []metav1.TableColumnDefinition {
	if !members || len(cols) == 0 {
		return cols
	}
	out := append([]metav1.TableColumnDefinition{cols[0], {Name: "Cluster", Type: "string", Description: "The cluster the object is in."}}, cols[1:]...)
	return append(out, metav1.TableColumnDefinition{Name: "Adoption", Type: "string", Description: "Whether the control plane propagated the object (Y) or not (N)."})
}

func withClusterCells(cells []any, cluster, adopted string) []any {
	if len(cells) == 0 {
		return cells
	}
	out := append([]any{cells[0], cluster}, cells[1:]...)
	return append(out, adopted)
}

// adoption is Y for a member object the control plane manages, N for one
// it does not, and - for the control plane's own.
func adoption(cluster string, obj runtime.RawExtension) string {
	if cluster == controlPlaneRow {
		return "-"
	}
	m, ok := obj.Object.(*metav1.PartialObjectMetadata)
	if ok && m.Labels[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue {
		return "Y"
	}
	return "N"
}

// printObjects prints the objects in a structured format: one object
// alone, several as a v1 List.
func (o *getOptions) printObjects(out io.Writer, items []foundObject) error {
	p, err := o.print.ToPrinter()
	if err != nil {
		return err
	}
	if len(items) == 1 {
		return p.PrintObj(items[0].info.Object, out)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}}}
	for _, f := range items {
		u, ok := f.info.Object.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("unexpected %T", f.info.Object)
		}
		list.Items = append(list.Items, *u)
	}
	if *o.print.OutputFormat == "name" {
		for i := range list.Items {
			if err := p.PrintObj(&list.Items[i], out); err != nil {
				return err
			}
		}
		return nil
	}
	return p.PrintObj(list, out)
}
