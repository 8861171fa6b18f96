package helmrelease

import (
	_ "helm.sh/helm/v3/pkg/action"
	_ "helm.sh/helm/v3/pkg/chart/loader"
	_ "helm.sh/helm/v3/pkg/chartutil"
	_ "helm.sh/helm/v3/pkg/lint"
	_ "helm.sh/helm/v3/pkg/storage/driver"
)

import _ "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
