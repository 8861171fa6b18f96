/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

// Lua functions each ResourceInterpreterCustomization rule's luaScript must
// define, by rule.
const (
	LuaFuncRetain          = "Retain"          // retention
	LuaFuncGetReplicas     = "GetReplicas"     // replicaResource
	LuaFuncGetComponents   = "GetComponents"   // componentResource
	LuaFuncReviseReplica   = "ReviseReplica"   // replicaRevision
	LuaFuncReflectStatus   = "ReflectStatus"   // statusReflection
	LuaFuncAggregateStatus = "AggregateStatus" // statusAggregation
	LuaFuncInterpretHealth = "InterpretHealth" // healthInterpretation
	LuaFuncGetDependencies = "GetDependencies" // dependencyInterpretation
)

// InterpreterContextVersion is the only ResourceInterpreterContext version
// the control plane speaks; webhooks must list it in
// interpreterContextVersions.
const InterpreterContextVersion = "v1alpha1"

// DefaultWebhookTimeoutSeconds is the call timeout of an interpreter webhook
// that sets none (the CRD defaults timeoutSeconds to it as well).
const DefaultWebhookTimeoutSeconds int32 = 10
