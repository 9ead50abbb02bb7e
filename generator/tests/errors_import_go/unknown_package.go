// +groupName=example.com
package v1

import (
	"example.com/other/apis/common"
)

// Spec embeds a type of a package the import was not given.
type Spec struct {
	common.Base `json:",inline"` //~ ERROR package `example.com/other/apis/common` is not among the inputs
	Ref common.Ref `json:"ref"` //~ ERROR package `example.com/other/apis/common` is not among the inputs
	Missing Undeclared `json:"missing"` //~ ERROR type `Undeclared` is not declared
	Unimported nope.Thing `json:"unimported"` //~ ERROR `nope` is not imported
}

// Thing is the kind: what it reaches is ported, and its errors are reported.
// +kubebuilder:object:root=true
type Thing struct { //~ WARNING does not embed both metav1.TypeMeta and metav1.ObjectMeta
	Spec Spec `json:"spec"`
}
