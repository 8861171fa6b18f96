// Command operator is the Flotilla operator: it turns each
// operator.karmada.io Karmada resource on its cluster into a federation
// control plane, and upgrades them when it is upgraded.
package main

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/internal/componentmain"
	"github.com/flotilla-io/flotilla/internal/release"
	"github.com/flotilla-io/flotilla/operator/app"
)

func main() {
	var opts app.Options
	opts.BindFlags(flag.CommandLine)
	logger := componentmain.Setup(componentmain.Options{})
	logger.Info("Starting the Flotilla operator", "version", release.Version)
	if err := app.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts, logger); err != nil {
		componentmain.Failed(logger, "Operator", err)
	}
}
