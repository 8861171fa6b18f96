// Command deploy installs the Flotilla operator on a cluster as
// `kubectl apply --server-side -k config/default` would, for machines
// without kubectl: it renders the kustomization with kustomize's library,
// server-side applies every object with controller-runtime's client, and
// prints what it applied. With --delete it deletes the same objects
// (`make undeploy`), the Karmada CRD first, which deletes every Karmada
// instance on the cluster.
//
//	go run ./hack/deploy [--kubeconfig FILE] [--context NAME] [--image REF] [--dir config/default] [--delete]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

type options struct {
	kubeconfig string
	context    string
	dir        string
	image      string
	delete     bool
	timeout    time.Duration
}

func (o *options) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path of the kubeconfig; default: $KUBECONFIG, then ~/.kube/config, then the in-cluster config.")
	fs.StringVar(&o.context, "context", "", "Context of the kubeconfig to use; default: its current context.")
	fs.StringVar(&o.dir, "dir", "config/default", "The kustomization to render.")
	fs.StringVar(&o.image, "image", "", "Image of the operator; default: the one the kustomization names.")
	fs.BoolVar(&o.delete, "delete", false, "Delete what the kustomization contains instead of applying it.")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "How long to wait for a CRD to be established, or to be gone when deleting.")
}

func main() {
	var o options
	fs := flag.NewFlagSet("deploy", flag.ExitOnError)
	o.bindFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "deploy: unexpected arguments %q\n", fs.Args())
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "deploy: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	objs, err := Render(o.dir, o.image)
	if err != nil {
		return err
	}
	cfg, err := restConfig(o.kubeconfig, o.context)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	d := &Deployer{Client: c, Out: out, Timeout: o.timeout}
	if o.delete {
		return d.Delete(ctx, objs)
	}
	return d.Apply(ctx, objs)
}

// restConfig loads the kubeconfig as kubectl does: the file named, else
// $KUBECONFIG, else ~/.kube/config, else the in-cluster config.
func restConfig(path, kubeContext string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	return cfg, nil
}
