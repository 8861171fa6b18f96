// Package luarules runs the Lua rules of ResourceInterpreterCustomizations:
// it merges the customizations of each kind into one set of scripts and
// answers the interpreter's operations by calling them in the lua VM. Both
// the customizations watched from the API server and the bundled ones are
// served by a Set.
package luarules

import (
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
)

// Rule is one customization rule: the operation it answers, its field in
// CustomizationRules and the global function its script defines.
type Rule struct {
	Operation configv1alpha1.InterpreterOperation
	Field     string
	Function  string
}

// rule indexes the rules in Rules' order.
type rule int

const (
	ruleRetention rule = iota
	ruleReplicaResource
	ruleComponentResource
	ruleReplicaRevision
	ruleStatusReflection
	ruleStatusAggregation
	ruleHealthInterpretation
	ruleDependencyInterpretation
	numRules
)

// Rules lists every rule, in the order of CustomizationRules.
func Rules() []Rule {
	return []Rule{
		ruleRetention:                {configv1alpha1.InterpreterOperationRetain, "retention", configv1alpha1.LuaFuncRetain},
		ruleReplicaResource:          {configv1alpha1.InterpreterOperationInterpretReplica, "replicaResource", configv1alpha1.LuaFuncGetReplicas},
		ruleComponentResource:        {configv1alpha1.InterpreterOperationInterpretComponent, "componentResource", configv1alpha1.LuaFuncGetComponents},
		ruleReplicaRevision:          {configv1alpha1.InterpreterOperationReviseReplica, "replicaRevision", configv1alpha1.LuaFuncReviseReplica},
		ruleStatusReflection:         {configv1alpha1.InterpreterOperationInterpretStatus, "statusReflection", configv1alpha1.LuaFuncReflectStatus},
		ruleStatusAggregation:        {configv1alpha1.InterpreterOperationAggregateStatus, "statusAggregation", configv1alpha1.LuaFuncAggregateStatus},
		ruleHealthInterpretation:     {configv1alpha1.InterpreterOperationInterpretHealth, "healthInterpretation", configv1alpha1.LuaFuncInterpretHealth},
		ruleDependencyInterpretation: {configv1alpha1.InterpreterOperationInterpretDependency, "dependencyInterpretation", configv1alpha1.LuaFuncGetDependencies},
	}
}

// RuleFor returns the rule answering op.
func RuleFor(op configv1alpha1.InterpreterOperation) (Rule, bool) {
	if r, ok := ruleOf(op); ok {
		return Rules()[r], true
	}
	return Rule{}, false
}

func ruleOf(op configv1alpha1.InterpreterOperation) (rule, bool) {
	switch op {
	case configv1alpha1.InterpreterOperationRetain:
		return ruleRetention, true
	case configv1alpha1.InterpreterOperationInterpretReplica:
		return ruleReplicaResource, true
	case configv1alpha1.InterpreterOperationInterpretComponent:
		return ruleComponentResource, true
	case configv1alpha1.InterpreterOperationReviseReplica:
		return ruleReplicaRevision, true
	case configv1alpha1.InterpreterOperationInterpretStatus:
		return ruleStatusReflection, true
	case configv1alpha1.InterpreterOperationAggregateStatus:
		return ruleStatusAggregation, true
	case configv1alpha1.InterpreterOperationInterpretHealth:
		return ruleHealthInterpretation, true
	case configv1alpha1.InterpreterOperationInterpretDependency:
		return ruleDependencyInterpretation, true
	}
	return 0, false
}

// scriptOf returns the Lua code of rule r in c, "" when c leaves it out.
func scriptOf(c *configv1alpha1.CustomizationRules, r rule) string {
	switch r {
	case ruleRetention:
		if c.Retention != nil {
			return c.Retention.LuaScript
		}
	case ruleReplicaResource:
		if c.ReplicaResource != nil {
			return c.ReplicaResource.LuaScript
		}
	case ruleComponentResource:
		if c.ComponentResource != nil {
			return c.ComponentResource.LuaScript
		}
	case ruleReplicaRevision:
		if c.ReplicaRevision != nil {
			return c.ReplicaRevision.LuaScript
		}
	case ruleStatusReflection:
		if c.StatusReflection != nil {
			return c.StatusReflection.LuaScript
		}
	case ruleStatusAggregation:
		if c.StatusAggregation != nil {
			return c.StatusAggregation.LuaScript
		}
	case ruleHealthInterpretation:
		if c.HealthInterpretation != nil {
			return c.HealthInterpretation.LuaScript
		}
	case ruleDependencyInterpretation:
		if c.DependencyInterpretation != nil {
			return c.DependencyInterpretation.LuaScript
		}
	}
	return ""
}
