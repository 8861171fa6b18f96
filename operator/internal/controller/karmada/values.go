package karmada

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/flotilla-io/flotilla/api/operator/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/features"
	"github.com/flotilla-io/flotilla/internal/release"
)

// chartValues computes the values of a component's chart from the spec,
// the release and the certificate hashes. Every value the operator owns is
// set explicitly, so a chart default changing in a newer operator never
// changes a running instance unnoticed. The values' meaning is documented
// in each chart's values.yaml.
func chartValues(k *operatorv1alpha1.Karmada, in *inputs, c Component) (map[string]any, error) {
	comps := k.Spec.Components
	if comps == nil {
		comps = &operatorv1alpha1.KarmadaComponents{}
	}
	v := map[string]any{
		"clusterDomain": in.domain,
		"podAnnotations": map[string]any{
			operatorv1alpha1.AnnotationCertificateHash: in.hashes[c],
		},
	}
	var common operatorv1alpha1.CommonSettings
	switch c {
	case Etcd:
		local := operatorv1alpha1.LocalEtcd{}
		if comps.Etcd != nil && comps.Etcd.Local != nil {
			local = *comps.Etcd.Local
		}
		common = local.CommonSettings
		v["image"] = image(k, in, release.Etcd, common)
		v["certSecret"] = certSecretName(k.Name, Etcd)
		v["initialClusterToken"] = k.Name + "-etcd"
		if d := local.VolumeData; d != nil {
			storage := map[string]any{}
			switch {
			case d.VolumeClaim != nil:
				storage["volumeClaim"] = toValue(d.VolumeClaim)
			case d.HostPath != nil:
				storage["hostPath"] = toValue(d.HostPath)
			case d.EmptyDir != nil:
				storage["emptyDir"] = toValue(d.EmptyDir)
			}
			v["storage"] = storage
		}
	case APIServer:
		a := operatorv1alpha1.KarmadaAPIServer{}
		if comps.KarmadaAPIServer != nil {
			a = *comps.KarmadaAPIServer
		}
		common = a.CommonSettings
		v["image"] = image(k, in, release.KubeAPIServer, common)
		v["instanceName"] = k.Name
		v["certSecret"] = certSecretName(k.Name, APIServer)
		v["serviceSubnet"] = ptr.Deref(a.ServiceSubnet, defaultServiceSubnet)
		svc := map[string]any{"type": string(corev1.ServiceTypeClusterIP), "annotations": toValue(a.ServiceAnnotations)}
		if a.ServiceType != "" {
			svc["type"] = string(a.ServiceType)
		}
		if a.LoadBalancerClass != nil {
			svc["loadBalancerClass"] = *a.LoadBalancerClass
		}
		v["service"] = svc
		v["featureGates"] = toValue(a.FeatureGates)
		v["extraArgs"] = toValue(a.ExtraArgs)
		v["extraVolumes"] = toValue(a.ExtraVolumes)
		v["extraVolumeMounts"] = toValue(a.ExtraVolumeMounts)
		v["sidecarContainers"] = toValue(a.SidecarContainers)
		v["etcd"] = map[string]any{"servers": etcdServers(k, in.domain)}
	case AggregatedAPIServer:
		a := operatorv1alpha1.KarmadaAggregatedAPIServer{}
		if comps.KarmadaAggregatedAPIServer != nil {
			a = *comps.KarmadaAggregatedAPIServer
		}
		common = a.CommonSettings
		v["image"] = image(k, in, release.AggregatedAPIServer, common)
		v["instanceName"] = k.Name
		v["certSecret"] = certSecretName(k.Name, AggregatedAPIServer)
		v["kubeconfigSecret"] = kubeconfigSecretName(k.Name, AggregatedAPIServer)
		v["featureGates"] = toValue(a.FeatureGates)
		v["extraArgs"] = toValue(a.ExtraArgs)
		v["etcd"] = map[string]any{"servers": etcdServers(k, in.domain), "prefix": etcdPrefix(k)}
	case KubeControllerManager:
		m := operatorv1alpha1.KubeControllerManager{}
		if comps.KubeControllerManager != nil {
			m = *comps.KubeControllerManager
		}
		common = m.CommonSettings
		v["image"] = image(k, in, release.KubeControllerManager, common)
		v["instanceName"] = k.Name
		v["certSecret"] = certSecretName(k.Name, KubeControllerManager)
		v["kubeconfigSecret"] = kubeconfigSecretName(k.Name, KubeControllerManager)
		if len(m.Controllers) > 0 {
			v["controllers"] = toValue(m.Controllers)
		}
		v["featureGates"] = toValue(m.FeatureGates)
		v["extraArgs"] = toValue(m.ExtraArgs)
	case ControllerManager:
		m := operatorv1alpha1.KarmadaControllerManager{}
		if comps.KarmadaControllerManager != nil {
			m = *comps.KarmadaControllerManager
		}
		common = m.CommonSettings
		v["image"] = image(k, in, release.ControllerManager, common)
		v["kubeconfigSecret"] = kubeconfigSecretName(k.Name, ControllerManager)
		v["extraArgs"] = toValue(m.ExtraArgs)
		// The gates it has, from spec.featureGates with its own on top;
		// the others are reported as unsupported.
		if gates, _ := features.Known(controllerManagerGates(k)); len(gates) > 0 {
			v["featureGates"] = toValue(gates)
		}
	case Scheduler:
		s := operatorv1alpha1.KarmadaScheduler{}
		if comps.KarmadaScheduler != nil {
			s = *comps.KarmadaScheduler
		}
		common = s.CommonSettings
		v["image"] = image(k, in, release.Scheduler, common)
		v["kubeconfigSecret"] = kubeconfigSecretName(k.Name, Scheduler)
		v["extraArgs"] = toValue(s.ExtraArgs)
	case Descheduler:
		d := operatorv1alpha1.KarmadaDescheduler{}
		if comps.KarmadaDescheduler != nil {
			d = *comps.KarmadaDescheduler
		}
		common = d.CommonSettings
		v["image"] = image(k, in, release.Descheduler, common)
		v["kubeconfigSecret"] = kubeconfigSecretName(k.Name, Descheduler)
		v["extraArgs"] = toValue(d.ExtraArgs)
	case Webhook:
		w := operatorv1alpha1.KarmadaWebhook{}
		if comps.KarmadaWebhook != nil {
			w = *comps.KarmadaWebhook
		}
		common = w.CommonSettings
		v["image"] = image(k, in, release.Webhook, common)
		v["kubeconfigSecret"] = kubeconfigSecretName(k.Name, Webhook)
		v["certSecret"] = certSecretName(k.Name, Webhook)
		v["extraArgs"] = toValue(w.ExtraArgs)
	default:
		return nil, fmt.Errorf("no chart values for component %q", c)
	}
	maps.Copy(v, commonValues(common))
	return v, nil
}

// etcdServers are the client URLs of the instance's etcd: the user's
// external endpoints, or the local etcd's client Service.
func etcdServers(k *operatorv1alpha1.Karmada, domain string) any {
	if e := externalEtcd(k); e != nil {
		return toValue(e.Endpoints)
	}
	return []any{fmt.Sprintf("https://%s.%s.svc.%s:2379", etcdClientServiceName(k.Name), k.Namespace, domain)}
}

// etcdPrefix is the API server's --etcd-prefix: the aggregated API server
// stores Clusters under the same one, where the Cluster CRD keeps them.
func etcdPrefix(k *operatorv1alpha1.Karmada) string {
	if c := k.Spec.Components; c != nil && c.KarmadaAPIServer != nil {
		if p, ok := c.KarmadaAPIServer.ExtraArgs["etcd-prefix"]; ok && p != "" {
			return p
		}
	}
	return defaultEtcdPrefix
}

func image(k *operatorv1alpha1.Karmada, in *inputs, c release.Component, s operatorv1alpha1.CommonSettings) map[string]any {
	repo, tag := imageOf(k, in.target, c, s.Image)
	policy := string(corev1.PullIfNotPresent)
	if s.ImagePullPolicy != "" {
		policy = string(s.ImagePullPolicy)
	}
	return map[string]any{"repository": repo, "tag": tag, "pullPolicy": policy}
}

// commonValues are the pod settings every chart takes alike.
func commonValues(s operatorv1alpha1.CommonSettings) map[string]any {
	v := map[string]any{
		"replicas":          int64(ptr.Deref(s.Replicas, 1)),
		"labels":            toValue(s.Labels),
		"annotations":       toValue(s.Annotations),
		"resources":         toValue(s.Resources),
		"affinity":          toValue(s.Affinity),
		"tolerations":       toValue(s.Tolerations),
		"priorityClassName": s.PriorityClassName,
	}
	pdb := map[string]any{}
	if b := s.PodDisruptionBudgetConfig; b != nil {
		if b.MinAvailable != nil {
			pdb["minAvailable"] = toValue(b.MinAvailable)
		}
		if b.MaxUnavailable != nil {
			pdb["maxUnavailable"] = toValue(b.MaxUnavailable)
		}
	}
	v["podDisruptionBudget"] = pdb
	return v
}

// toValue turns an API value into what Helm values hold (maps, lists,
// strings, numbers, booleans), by way of its JSON form. Unset values become
// empty ones of their kind, so that every value is stated and a template
// sees the type it expects.
func toValue(x any) any {
	data, err := json.Marshal(x)
	if err != nil || string(data) == "null" {
		if k := reflect.ValueOf(x).Kind(); k == reflect.Slice || k == reflect.Array {
			return []any{}
		}
		return map[string]any{}
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return map[string]any{}
	}
	return out
}

// controllerManagerGates are spec.featureGates with the controller-manager's
// own on top.
func controllerManagerGates(k *operatorv1alpha1.Karmada) map[string]bool {
	gates := maps.Clone(k.Spec.FeatureGates)
	if c := k.Spec.Components; c != nil && c.KarmadaControllerManager != nil {
		if gates == nil {
			gates = map[string]bool{}
		}
		maps.Copy(gates, c.KarmadaControllerManager.FeatureGates)
	}
	return gates
}
