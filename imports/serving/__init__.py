from __future__ import annotations

from pkgutil import extend_path
__path__ = extend_path(__path__, __name__)

import abc
import builtins
import datetime
import enum
import typing

import jsii
import publication
import typing_extensions

from jsii._type_checking import cached_type_hints, check_type


from ._jsii import *

class _LazyImport:
    def __init__(self, module_name: str) -> None:
        self._module_name = module_name
        self._module: typing.Any = None
    def __getattr__(self, name: str) -> typing.Any:
        if self._module is None:
            import importlib
            self._module = importlib.import_module(self._module_name)
        return getattr(self._module, name)

if typing.TYPE_CHECKING:

    import cdk8s as _cdk8s_d3d9af27
    import constructs as _constructs_77d1e7e8
else:

    _cdk8s_d3d9af27 = _LazyImport("cdk8s")
    _constructs_77d1e7e8 = _LazyImport("constructs")


class InferenceRuntime(
    _cdk8s_d3d9af27.ApiObject,
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.InferenceRuntime",
):
    '''InferenceRuntime is a reusable serving image with its arguments and accelerator.

    :schema: InferenceRuntime
    '''

    def __init__(
        self,
        scope: "_constructs_77d1e7e8.Construct",
        id: builtins.str,
        *,
        spec: typing.Union["InferenceRuntimeSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''Defines a "InferenceRuntime" API object.

        :param scope: the scope in which to define this object.
        :param id: a scope-local name for the object.
        :param spec: 
        :param metadata: 
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__97126898951840ffa155f6c5fe5e640fa66cd642c174b5511ccfc1a9911a6847)
            check_type(argname="argument scope", value=scope, expected_type=type_hints["scope"])
            check_type(argname="argument id", value=id, expected_type=type_hints["id"])
        props = InferenceRuntimeProps(spec=spec, metadata=metadata)

        jsii.create(self.__class__, self, [scope, id, props])

    @jsii.member(jsii_name="manifest")
    @builtins.classmethod
    def manifest(
        cls,
        *,
        spec: typing.Union["InferenceRuntimeSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> typing.Any:
        '''Renders a Kubernetes manifest for "InferenceRuntime".

        This can be used to inline resource manifests inside other objects (e.g. as templates).

        :param spec: 
        :param metadata: 
        '''
        props = InferenceRuntimeProps(spec=spec, metadata=metadata)

        return typing.cast(typing.Any, jsii.sinvoke(cls, "manifest", [props]))

    @jsii.member(jsii_name="toJson")
    def to_json(self) -> typing.Any:
        '''Renders the object to Kubernetes JSON.'''
        return typing.cast(typing.Any, jsii.invoke(self, "toJson", []))

    @jsii.python.classproperty
    @jsii.member(jsii_name="GVK")
    def GVK(cls) -> "_cdk8s_d3d9af27.GroupVersionKind":
        '''Returns the apiVersion and kind for "InferenceRuntime".'''
        return typing.cast("_cdk8s_d3d9af27.GroupVersionKind", jsii.sget(cls, "GVK"))


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeProps",
    jsii_struct_bases=[],
    name_mapping={"spec": "spec", "metadata": "metadata"},
)
class InferenceRuntimeProps:
    def __init__(
        self,
        *,
        spec: typing.Union["InferenceRuntimeSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''InferenceRuntime is a reusable serving image with its arguments and accelerator.

        :param spec: 
        :param metadata: 

        :schema: InferenceRuntime
        '''
        if isinstance(spec, dict):
            spec = InferenceRuntimeSpec(**spec)
        if isinstance(metadata, dict):
            metadata = _cdk8s_d3d9af27.ApiObjectMetadata(**metadata)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__e8ceb53e417f22eee4a8fa8efcd115bb15865ffb223d68a3cbf0386a6b32b20c)
            check_type(argname="argument spec", value=spec, expected_type=type_hints["spec"])
            check_type(argname="argument metadata", value=metadata, expected_type=type_hints["metadata"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "spec": spec,
        }
        if metadata is not None:
            self._values["metadata"] = metadata

    @builtins.property
    def spec(self) -> "InferenceRuntimeSpec":
        '''
        :schema: InferenceRuntime#spec
        '''
        result = self._values.get("spec")
        assert result is not None, "Required property 'spec' is missing"
        return typing.cast("InferenceRuntimeSpec", result)

    @builtins.property
    def metadata(self) -> typing.Optional["_cdk8s_d3d9af27.ApiObjectMetadata"]:
        '''
        :schema: InferenceRuntime#metadata
        '''
        result = self._values.get("metadata")
        return typing.cast(typing.Optional["_cdk8s_d3d9af27.ApiObjectMetadata"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeProps(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpec",
    jsii_struct_bases=[],
    name_mapping={
        "container": "container",
        "vendor": "vendor",
        "accelerator": "accelerator",
        "family": "family",
        "health": "health",
        "lifecycle": "lifecycle",
        "metrics": "metrics",
        "priority": "priority",
    },
)
class InferenceRuntimeSpec:
    def __init__(
        self,
        *,
        container: typing.Union["InferenceRuntimeSpecContainer", typing.Dict[builtins.str, typing.Any]],
        vendor: "InferenceRuntimeSpecVendor",
        accelerator: typing.Optional[typing.Union["InferenceRuntimeSpecAccelerator", typing.Dict[builtins.str, typing.Any]]] = None,
        family: typing.Optional["InferenceRuntimeSpecFamily"] = None,
        health: typing.Optional[typing.Union["InferenceRuntimeSpecHealth", typing.Dict[builtins.str, typing.Any]]] = None,
        lifecycle: typing.Optional[typing.Union["InferenceRuntimeSpecLifecycle", typing.Dict[builtins.str, typing.Any]]] = None,
        metrics: typing.Optional[typing.Union["InferenceRuntimeSpecMetrics", typing.Dict[builtins.str, typing.Any]]] = None,
        priority: typing.Optional[jsii.Number] = None,
    ) -> None:
        '''
        :param container: The serving container.
        :param vendor: Accelerator vendor; selects the accelerator adapter.
        :param accelerator: Devices and placement; required unless vendor is cpu.
        :param family: Serving engine family.
        :param health: Probes of the serving container.
        :param lifecycle: Shutdown behaviour.
        :param metrics: Scrape metadata of the engine.
        :param priority: Higher wins among runtimes of the same vendor.

        :schema: InferenceRuntimeSpec
        '''
        if isinstance(container, dict):
            container = InferenceRuntimeSpecContainer(**container)
        if isinstance(accelerator, dict):
            accelerator = InferenceRuntimeSpecAccelerator(**accelerator)
        if isinstance(health, dict):
            health = InferenceRuntimeSpecHealth(**health)
        if isinstance(lifecycle, dict):
            lifecycle = InferenceRuntimeSpecLifecycle(**lifecycle)
        if isinstance(metrics, dict):
            metrics = InferenceRuntimeSpecMetrics(**metrics)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__987cdabb4c04e2aea2849691fd659e62047b6b69dbe70bb3ec05034aa4a3ca00)
            check_type(argname="argument container", value=container, expected_type=type_hints["container"])
            check_type(argname="argument vendor", value=vendor, expected_type=type_hints["vendor"])
            check_type(argname="argument accelerator", value=accelerator, expected_type=type_hints["accelerator"])
            check_type(argname="argument family", value=family, expected_type=type_hints["family"])
            check_type(argname="argument health", value=health, expected_type=type_hints["health"])
            check_type(argname="argument lifecycle", value=lifecycle, expected_type=type_hints["lifecycle"])
            check_type(argname="argument metrics", value=metrics, expected_type=type_hints["metrics"])
            check_type(argname="argument priority", value=priority, expected_type=type_hints["priority"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "container": container,
            "vendor": vendor,
        }
        if accelerator is not None:
            self._values["accelerator"] = accelerator
        if family is not None:
            self._values["family"] = family
        if health is not None:
            self._values["health"] = health
        if lifecycle is not None:
            self._values["lifecycle"] = lifecycle
        if metrics is not None:
            self._values["metrics"] = metrics
        if priority is not None:
            self._values["priority"] = priority

    @builtins.property
    def container(self) -> "InferenceRuntimeSpecContainer":
        '''The serving container.

        :schema: InferenceRuntimeSpec#container
        '''
        result = self._values.get("container")
        assert result is not None, "Required property 'container' is missing"
        return typing.cast("InferenceRuntimeSpecContainer", result)

    @builtins.property
    def vendor(self) -> "InferenceRuntimeSpecVendor":
        '''Accelerator vendor;

        selects the accelerator adapter.

        :schema: InferenceRuntimeSpec#vendor
        '''
        result = self._values.get("vendor")
        assert result is not None, "Required property 'vendor' is missing"
        return typing.cast("InferenceRuntimeSpecVendor", result)

    @builtins.property
    def accelerator(self) -> typing.Optional["InferenceRuntimeSpecAccelerator"]:
        '''Devices and placement;

        required unless vendor is cpu.

        :schema: InferenceRuntimeSpec#accelerator
        '''
        result = self._values.get("accelerator")
        return typing.cast(typing.Optional["InferenceRuntimeSpecAccelerator"], result)

    @builtins.property
    def family(self) -> typing.Optional["InferenceRuntimeSpecFamily"]:
        '''Serving engine family.

        :schema: InferenceRuntimeSpec#family
        '''
        result = self._values.get("family")
        return typing.cast(typing.Optional["InferenceRuntimeSpecFamily"], result)

    @builtins.property
    def health(self) -> typing.Optional["InferenceRuntimeSpecHealth"]:
        '''Probes of the serving container.

        :schema: InferenceRuntimeSpec#health
        '''
        result = self._values.get("health")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealth"], result)

    @builtins.property
    def lifecycle(self) -> typing.Optional["InferenceRuntimeSpecLifecycle"]:
        '''Shutdown behaviour.

        :schema: InferenceRuntimeSpec#lifecycle
        '''
        result = self._values.get("lifecycle")
        return typing.cast(typing.Optional["InferenceRuntimeSpecLifecycle"], result)

    @builtins.property
    def metrics(self) -> typing.Optional["InferenceRuntimeSpecMetrics"]:
        '''Scrape metadata of the engine.

        :schema: InferenceRuntimeSpec#metrics
        '''
        result = self._values.get("metrics")
        return typing.cast(typing.Optional["InferenceRuntimeSpecMetrics"], result)

    @builtins.property
    def priority(self) -> typing.Optional[jsii.Number]:
        '''Higher wins among runtimes of the same vendor.

        :schema: InferenceRuntimeSpec#priority
        '''
        result = self._values.get("priority")
        return typing.cast(typing.Optional[jsii.Number], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpec(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecAccelerator",
    jsii_struct_bases=[],
    name_mapping={
        "resource_name": "resourceName",
        "node_selector": "nodeSelector",
        "scheduler": "scheduler",
        "sharing": "sharing",
        "tolerations": "tolerations",
    },
)
class InferenceRuntimeSpecAccelerator:
    def __init__(
        self,
        *,
        resource_name: builtins.str,
        node_selector: typing.Optional[typing.Mapping[builtins.str, builtins.str]] = None,
        scheduler: typing.Optional[typing.Union["InferenceRuntimeSpecAcceleratorScheduler", typing.Dict[builtins.str, typing.Any]]] = None,
        sharing: typing.Optional[typing.Union["InferenceRuntimeSpecAcceleratorSharing", typing.Dict[builtins.str, typing.Any]]] = None,
        tolerations: typing.Optional[typing.Sequence[typing.Union["InferenceRuntimeSpecAcceleratorTolerations", typing.Dict[builtins.str, typing.Any]]]] = None,
    ) -> None:
        '''Devices and placement;

        required unless vendor is cpu.

        :param resource_name: Extended resource of the device plugin, e.g. nvidia.com/gpu, huawei.com/Ascend910, amd.com/gpu, habana.ai/gaudi.
        :param node_selector: Copied to backend and prewarm Pods.
        :param scheduler: Scheduler of the backend Pods.
        :param sharing: Reserved: accelerator sharing.
        :param tolerations: Copied to backend and prewarm Pods.

        :schema: InferenceRuntimeSpecAccelerator
        '''
        if isinstance(scheduler, dict):
            scheduler = InferenceRuntimeSpecAcceleratorScheduler(**scheduler)
        if isinstance(sharing, dict):
            sharing = InferenceRuntimeSpecAcceleratorSharing(**sharing)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__4ba559d3e4d2aec8fd14351a713de76fcedbccea2ca51c6bd255a235ead93cff)
            check_type(argname="argument resource_name", value=resource_name, expected_type=type_hints["resource_name"])
            check_type(argname="argument node_selector", value=node_selector, expected_type=type_hints["node_selector"])
            check_type(argname="argument scheduler", value=scheduler, expected_type=type_hints["scheduler"])
            check_type(argname="argument sharing", value=sharing, expected_type=type_hints["sharing"])
            check_type(argname="argument tolerations", value=tolerations, expected_type=type_hints["tolerations"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "resource_name": resource_name,
        }
        if node_selector is not None:
            self._values["node_selector"] = node_selector
        if scheduler is not None:
            self._values["scheduler"] = scheduler
        if sharing is not None:
            self._values["sharing"] = sharing
        if tolerations is not None:
            self._values["tolerations"] = tolerations

    @builtins.property
    def resource_name(self) -> builtins.str:
        '''Extended resource of the device plugin, e.g. nvidia.com/gpu, huawei.com/Ascend910, amd.com/gpu, habana.ai/gaudi.

        :schema: InferenceRuntimeSpecAccelerator#resourceName
        '''
        result = self._values.get("resource_name")
        assert result is not None, "Required property 'resource_name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def node_selector(
        self,
    ) -> typing.Optional[typing.Mapping[builtins.str, builtins.str]]:
        '''Copied to backend and prewarm Pods.

        :schema: InferenceRuntimeSpecAccelerator#nodeSelector
        '''
        result = self._values.get("node_selector")
        return typing.cast(typing.Optional[typing.Mapping[builtins.str, builtins.str]], result)

    @builtins.property
    def scheduler(self) -> typing.Optional["InferenceRuntimeSpecAcceleratorScheduler"]:
        '''Scheduler of the backend Pods.

        :schema: InferenceRuntimeSpecAccelerator#scheduler
        '''
        result = self._values.get("scheduler")
        return typing.cast(typing.Optional["InferenceRuntimeSpecAcceleratorScheduler"], result)

    @builtins.property
    def sharing(self) -> typing.Optional["InferenceRuntimeSpecAcceleratorSharing"]:
        '''Reserved: accelerator sharing.

        :schema: InferenceRuntimeSpecAccelerator#sharing
        '''
        result = self._values.get("sharing")
        return typing.cast(typing.Optional["InferenceRuntimeSpecAcceleratorSharing"], result)

    @builtins.property
    def tolerations(
        self,
    ) -> typing.Optional[typing.List["InferenceRuntimeSpecAcceleratorTolerations"]]:
        '''Copied to backend and prewarm Pods.

        :schema: InferenceRuntimeSpecAccelerator#tolerations
        '''
        result = self._values.get("tolerations")
        return typing.cast(typing.Optional[typing.List["InferenceRuntimeSpecAcceleratorTolerations"]], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecAccelerator(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecAcceleratorScheduler",
    jsii_struct_bases=[],
    name_mapping={"name": "name", "queue": "queue"},
)
class InferenceRuntimeSpecAcceleratorScheduler:
    def __init__(
        self,
        *,
        name: typing.Optional[builtins.str] = None,
        queue: typing.Optional[builtins.str] = None,
    ) -> None:
        '''Scheduler of the backend Pods.

        :param name: Pod schedulerName, e.g. volcano.
        :param queue: Volcano queue (only with name volcano).

        :schema: InferenceRuntimeSpecAcceleratorScheduler
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__650fbbc32259907d6e9fb1f1b894d2e262516240f56792e2fd8243dc559affb8)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument queue", value=queue, expected_type=type_hints["queue"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if name is not None:
            self._values["name"] = name
        if queue is not None:
            self._values["queue"] = queue

    @builtins.property
    def name(self) -> typing.Optional[builtins.str]:
        '''Pod schedulerName, e.g. volcano.

        :schema: InferenceRuntimeSpecAcceleratorScheduler#name
        '''
        result = self._values.get("name")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def queue(self) -> typing.Optional[builtins.str]:
        '''Volcano queue (only with name volcano).

        :schema: InferenceRuntimeSpecAcceleratorScheduler#queue
        '''
        result = self._values.get("queue")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecAcceleratorScheduler(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecAcceleratorSharing",
    jsii_struct_bases=[],
    name_mapping={"supported": "supported"},
)
class InferenceRuntimeSpecAcceleratorSharing:
    def __init__(self, *, supported: typing.Optional[builtins.bool] = None) -> None:
        '''Reserved: accelerator sharing.

        :param supported: Reserved placeholder; must stay false.

        :schema: InferenceRuntimeSpecAcceleratorSharing
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__4daeb20687baa4328e665631b864f6ffadac6403bce84ecb557906fea2c0b968)
            check_type(argname="argument supported", value=supported, expected_type=type_hints["supported"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if supported is not None:
            self._values["supported"] = supported

    @builtins.property
    def supported(self) -> typing.Optional[builtins.bool]:
        '''Reserved placeholder;

        must stay false.

        :schema: InferenceRuntimeSpecAcceleratorSharing#supported
        '''
        result = self._values.get("supported")
        return typing.cast(typing.Optional[builtins.bool], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecAcceleratorSharing(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecAcceleratorTolerations",
    jsii_struct_bases=[],
    name_mapping={
        "effect": "effect",
        "key": "key",
        "operator": "operator",
        "toleration_seconds": "tolerationSeconds",
        "value": "value",
    },
)
class InferenceRuntimeSpecAcceleratorTolerations:
    def __init__(
        self,
        *,
        effect: typing.Optional["InferenceRuntimeSpecAcceleratorTolerationsEffect"] = None,
        key: typing.Optional[builtins.str] = None,
        operator: typing.Optional["InferenceRuntimeSpecAcceleratorTolerationsOperator"] = None,
        toleration_seconds: typing.Optional[jsii.Number] = None,
        value: typing.Optional[builtins.str] = None,
    ) -> None:
        '''``corev1.Toleration``.

        :param effect: 
        :param key: 
        :param operator: 
        :param toleration_seconds: 
        :param value: 

        :schema: InferenceRuntimeSpecAcceleratorTolerations
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__5242bf6dd6c7753b92edecf23f9d816dccbaf13d935a2c3bc96c88d2cdbb82ae)
            check_type(argname="argument effect", value=effect, expected_type=type_hints["effect"])
            check_type(argname="argument key", value=key, expected_type=type_hints["key"])
            check_type(argname="argument operator", value=operator, expected_type=type_hints["operator"])
            check_type(argname="argument toleration_seconds", value=toleration_seconds, expected_type=type_hints["toleration_seconds"])
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if effect is not None:
            self._values["effect"] = effect
        if key is not None:
            self._values["key"] = key
        if operator is not None:
            self._values["operator"] = operator
        if toleration_seconds is not None:
            self._values["toleration_seconds"] = toleration_seconds
        if value is not None:
            self._values["value"] = value

    @builtins.property
    def effect(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecAcceleratorTolerationsEffect"]:
        '''
        :schema: InferenceRuntimeSpecAcceleratorTolerations#effect
        '''
        result = self._values.get("effect")
        return typing.cast(typing.Optional["InferenceRuntimeSpecAcceleratorTolerationsEffect"], result)

    @builtins.property
    def key(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecAcceleratorTolerations#key
        '''
        result = self._values.get("key")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def operator(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecAcceleratorTolerationsOperator"]:
        '''
        :schema: InferenceRuntimeSpecAcceleratorTolerations#operator
        '''
        result = self._values.get("operator")
        return typing.cast(typing.Optional["InferenceRuntimeSpecAcceleratorTolerationsOperator"], result)

    @builtins.property
    def toleration_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecAcceleratorTolerations#tolerationSeconds
        '''
        result = self._values.get("toleration_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def value(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecAcceleratorTolerations#value
        '''
        result = self._values.get("value")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecAcceleratorTolerations(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.enum(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecAcceleratorTolerationsEffect"
)
class InferenceRuntimeSpecAcceleratorTolerationsEffect(enum.Enum):
    '''
    :schema: InferenceRuntimeSpecAcceleratorTolerationsEffect
    '''

    NO_SCHEDULE = "NO_SCHEDULE"
    '''NoSchedule.'''
    PREFER_NO_SCHEDULE = "PREFER_NO_SCHEDULE"
    '''PreferNoSchedule.'''
    NO_EXECUTE = "NO_EXECUTE"
    '''NoExecute.'''


@jsii.enum(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecAcceleratorTolerationsOperator"
)
class InferenceRuntimeSpecAcceleratorTolerationsOperator(enum.Enum):
    '''
    :schema: InferenceRuntimeSpecAcceleratorTolerationsOperator
    '''

    EXISTS = "EXISTS"
    '''Exists.'''
    EQUAL = "EQUAL"
    '''Equal.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainer",
    jsii_struct_bases=[],
    name_mapping={
        "image": "image",
        "args": "args",
        "env": "env",
        "port": "port",
        "volume_mounts": "volumeMounts",
        "volumes": "volumes",
    },
)
class InferenceRuntimeSpecContainer:
    def __init__(
        self,
        *,
        image: builtins.str,
        args: typing.Optional[typing.Sequence[builtins.str]] = None,
        env: typing.Optional[typing.Sequence[typing.Union["InferenceRuntimeSpecContainerEnv", typing.Dict[builtins.str, typing.Any]]]] = None,
        port: typing.Optional[typing.Union["InferenceRuntimeSpecContainerPort", typing.Dict[builtins.str, typing.Any]]] = None,
        volume_mounts: typing.Optional[typing.Sequence[typing.Union["InferenceRuntimeSpecContainerVolumeMounts", typing.Dict[builtins.str, typing.Any]]]] = None,
        volumes: typing.Optional[typing.Sequence[typing.Union["InferenceRuntimeSpecContainerVolumes", typing.Dict[builtins.str, typing.Any]]]] = None,
    ) -> None:
        '''The serving container.

        :param image: OpenAI-compatible serving image.
        :param args: Arguments; may use {{ .Model.Path }}, {{ .Service.Name }} and {{ .Service.Namespace }}.
        :param env: Environment; literal values may use the same placeholders as args.
        :param port: The serving port.
        :param volume_mounts: Extension: where the serving container mounts them; a mount at an adapter default's path (the Ascend driver files) replaces that default.
        :param volumes: Extension: extra volumes of the backend Pod (hostPath, configMap, secret or emptyDir).

        :schema: InferenceRuntimeSpecContainer
        '''
        if isinstance(port, dict):
            port = InferenceRuntimeSpecContainerPort(**port)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__3fe5e8427fafda38d18095d43df981f0ced5a0a2610d4bda62a6444f6a5c01a5)
            check_type(argname="argument image", value=image, expected_type=type_hints["image"])
            check_type(argname="argument args", value=args, expected_type=type_hints["args"])
            check_type(argname="argument env", value=env, expected_type=type_hints["env"])
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument volume_mounts", value=volume_mounts, expected_type=type_hints["volume_mounts"])
            check_type(argname="argument volumes", value=volumes, expected_type=type_hints["volumes"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "image": image,
        }
        if args is not None:
            self._values["args"] = args
        if env is not None:
            self._values["env"] = env
        if port is not None:
            self._values["port"] = port
        if volume_mounts is not None:
            self._values["volume_mounts"] = volume_mounts
        if volumes is not None:
            self._values["volumes"] = volumes

    @builtins.property
    def image(self) -> builtins.str:
        '''OpenAI-compatible serving image.

        :schema: InferenceRuntimeSpecContainer#image
        '''
        result = self._values.get("image")
        assert result is not None, "Required property 'image' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def args(self) -> typing.Optional[typing.List[builtins.str]]:
        '''Arguments;

        may use {{ .Model.Path }}, {{ .Service.Name }} and {{ .Service.Namespace }}.

        :schema: InferenceRuntimeSpecContainer#args
        '''
        result = self._values.get("args")
        return typing.cast(typing.Optional[typing.List[builtins.str]], result)

    @builtins.property
    def env(self) -> typing.Optional[typing.List["InferenceRuntimeSpecContainerEnv"]]:
        '''Environment;

        literal values may use the same placeholders as args.

        :schema: InferenceRuntimeSpecContainer#env
        '''
        result = self._values.get("env")
        return typing.cast(typing.Optional[typing.List["InferenceRuntimeSpecContainerEnv"]], result)

    @builtins.property
    def port(self) -> typing.Optional["InferenceRuntimeSpecContainerPort"]:
        '''The serving port.

        :schema: InferenceRuntimeSpecContainer#port
        '''
        result = self._values.get("port")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerPort"], result)

    @builtins.property
    def volume_mounts(
        self,
    ) -> typing.Optional[typing.List["InferenceRuntimeSpecContainerVolumeMounts"]]:
        '''Extension: where the serving container mounts them;

        a mount at an adapter default's path (the Ascend driver files) replaces that default.

        :schema: InferenceRuntimeSpecContainer#volumeMounts
        '''
        result = self._values.get("volume_mounts")
        return typing.cast(typing.Optional[typing.List["InferenceRuntimeSpecContainerVolumeMounts"]], result)

    @builtins.property
    def volumes(
        self,
    ) -> typing.Optional[typing.List["InferenceRuntimeSpecContainerVolumes"]]:
        '''Extension: extra volumes of the backend Pod (hostPath, configMap, secret or emptyDir).

        :schema: InferenceRuntimeSpecContainer#volumes
        '''
        result = self._values.get("volumes")
        return typing.cast(typing.Optional[typing.List["InferenceRuntimeSpecContainerVolumes"]], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainer(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerEnv",
    jsii_struct_bases=[],
    name_mapping={"name": "name", "value": "value", "value_from": "valueFrom"},
)
class InferenceRuntimeSpecContainerEnv:
    def __init__(
        self,
        *,
        name: builtins.str,
        value: typing.Optional[builtins.str] = None,
        value_from: typing.Optional[typing.Union["InferenceRuntimeSpecContainerEnvValueFrom", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''``corev1.EnvVar`` whose literal ``value`` may use the runtime placeholders.

        :param name: 
        :param value: 
        :param value_from: 

        :schema: InferenceRuntimeSpecContainerEnv
        '''
        if isinstance(value_from, dict):
            value_from = InferenceRuntimeSpecContainerEnvValueFrom(**value_from)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__0a02387d13103c3d703fee19813213c02fb75e07d7b7adf8af110bbcc85ec68a)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
            check_type(argname="argument value_from", value=value_from, expected_type=type_hints["value_from"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
        }
        if value is not None:
            self._values["value"] = value
        if value_from is not None:
            self._values["value_from"] = value_from

    @builtins.property
    def name(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecContainerEnv#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def value(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecContainerEnv#value
        '''
        result = self._values.get("value")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def value_from(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerEnvValueFrom"]:
        '''
        :schema: InferenceRuntimeSpecContainerEnv#valueFrom
        '''
        result = self._values.get("value_from")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerEnvValueFrom"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerEnv(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerEnvValueFrom",
    jsii_struct_bases=[],
    name_mapping={
        "config_map_key_ref": "configMapKeyRef",
        "field_ref": "fieldRef",
        "resource_field_ref": "resourceFieldRef",
        "secret_key_ref": "secretKeyRef",
    },
)
class InferenceRuntimeSpecContainerEnvValueFrom:
    def __init__(
        self,
        *,
        config_map_key_ref: typing.Optional[typing.Union["InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef", typing.Dict[builtins.str, typing.Any]]] = None,
        field_ref: typing.Optional[typing.Union["InferenceRuntimeSpecContainerEnvValueFromFieldRef", typing.Dict[builtins.str, typing.Any]]] = None,
        resource_field_ref: typing.Optional[typing.Union["InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef", typing.Dict[builtins.str, typing.Any]]] = None,
        secret_key_ref: typing.Optional[typing.Union["InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''
        :param config_map_key_ref: ``ConfigMapKeySelector`` / ``SecretKeySelector``.
        :param field_ref: 
        :param resource_field_ref: 
        :param secret_key_ref: ``ConfigMapKeySelector`` / ``SecretKeySelector``.

        :schema: InferenceRuntimeSpecContainerEnvValueFrom
        '''
        if isinstance(config_map_key_ref, dict):
            config_map_key_ref = InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef(**config_map_key_ref)
        if isinstance(field_ref, dict):
            field_ref = InferenceRuntimeSpecContainerEnvValueFromFieldRef(**field_ref)
        if isinstance(resource_field_ref, dict):
            resource_field_ref = InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef(**resource_field_ref)
        if isinstance(secret_key_ref, dict):
            secret_key_ref = InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef(**secret_key_ref)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__26b98a4ec7f377a1f16d2cafdd20923fb8b4a21bd132d4e48631d48d7ba0fbe8)
            check_type(argname="argument config_map_key_ref", value=config_map_key_ref, expected_type=type_hints["config_map_key_ref"])
            check_type(argname="argument field_ref", value=field_ref, expected_type=type_hints["field_ref"])
            check_type(argname="argument resource_field_ref", value=resource_field_ref, expected_type=type_hints["resource_field_ref"])
            check_type(argname="argument secret_key_ref", value=secret_key_ref, expected_type=type_hints["secret_key_ref"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if config_map_key_ref is not None:
            self._values["config_map_key_ref"] = config_map_key_ref
        if field_ref is not None:
            self._values["field_ref"] = field_ref
        if resource_field_ref is not None:
            self._values["resource_field_ref"] = resource_field_ref
        if secret_key_ref is not None:
            self._values["secret_key_ref"] = secret_key_ref

    @builtins.property
    def config_map_key_ref(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef"]:
        '''``ConfigMapKeySelector`` / ``SecretKeySelector``.

        :schema: InferenceRuntimeSpecContainerEnvValueFrom#configMapKeyRef
        '''
        result = self._values.get("config_map_key_ref")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef"], result)

    @builtins.property
    def field_ref(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerEnvValueFromFieldRef"]:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFrom#fieldRef
        '''
        result = self._values.get("field_ref")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerEnvValueFromFieldRef"], result)

    @builtins.property
    def resource_field_ref(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef"]:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFrom#resourceFieldRef
        '''
        result = self._values.get("resource_field_ref")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef"], result)

    @builtins.property
    def secret_key_ref(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef"]:
        '''``ConfigMapKeySelector`` / ``SecretKeySelector``.

        :schema: InferenceRuntimeSpecContainerEnvValueFrom#secretKeyRef
        '''
        result = self._values.get("secret_key_ref")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerEnvValueFrom(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef",
    jsii_struct_bases=[],
    name_mapping={"key": "key", "name": "name", "optional": "optional"},
)
class InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef:
    def __init__(
        self,
        *,
        key: builtins.str,
        name: builtins.str,
        optional: typing.Optional[builtins.bool] = None,
    ) -> None:
        '''``ConfigMapKeySelector`` / ``SecretKeySelector``.

        :param key: 
        :param name: 
        :param optional: 

        :schema: InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__d9254581dd43d9a21eb7da4056dafc9381833f7725366429db94fffeab22b625)
            check_type(argname="argument key", value=key, expected_type=type_hints["key"])
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument optional", value=optional, expected_type=type_hints["optional"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "key": key,
            "name": name,
        }
        if optional is not None:
            self._values["optional"] = optional

    @builtins.property
    def key(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef#key
        '''
        result = self._values.get("key")
        assert result is not None, "Required property 'key' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def name(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def optional(self) -> typing.Optional[builtins.bool]:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef#optional
        '''
        result = self._values.get("optional")
        return typing.cast(typing.Optional[builtins.bool], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerEnvValueFromFieldRef",
    jsii_struct_bases=[],
    name_mapping={"field_path": "fieldPath", "api_version": "apiVersion"},
)
class InferenceRuntimeSpecContainerEnvValueFromFieldRef:
    def __init__(
        self,
        *,
        field_path: builtins.str,
        api_version: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param field_path: 
        :param api_version: 

        :schema: InferenceRuntimeSpecContainerEnvValueFromFieldRef
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__8ef6528df7f49123b2bf8129ff9db76f50f5babcf4fb7de85dacdb17287d7f2b)
            check_type(argname="argument field_path", value=field_path, expected_type=type_hints["field_path"])
            check_type(argname="argument api_version", value=api_version, expected_type=type_hints["api_version"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "field_path": field_path,
        }
        if api_version is not None:
            self._values["api_version"] = api_version

    @builtins.property
    def field_path(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromFieldRef#fieldPath
        '''
        result = self._values.get("field_path")
        assert result is not None, "Required property 'field_path' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def api_version(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromFieldRef#apiVersion
        '''
        result = self._values.get("api_version")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerEnvValueFromFieldRef(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef",
    jsii_struct_bases=[],
    name_mapping={
        "resource": "resource",
        "container_name": "containerName",
        "divisor": "divisor",
    },
)
class InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef:
    def __init__(
        self,
        *,
        resource: builtins.str,
        container_name: typing.Optional[builtins.str] = None,
        divisor: typing.Optional["InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor"] = None,
    ) -> None:
        '''
        :param resource: 
        :param container_name: 
        :param divisor: 

        :schema: InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__f0ec87091c19072c178535a597e4194a89c70aec83e9787183807bfaf249814d)
            check_type(argname="argument resource", value=resource, expected_type=type_hints["resource"])
            check_type(argname="argument container_name", value=container_name, expected_type=type_hints["container_name"])
            check_type(argname="argument divisor", value=divisor, expected_type=type_hints["divisor"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "resource": resource,
        }
        if container_name is not None:
            self._values["container_name"] = container_name
        if divisor is not None:
            self._values["divisor"] = divisor

    @builtins.property
    def resource(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef#resource
        '''
        result = self._values.get("resource")
        assert result is not None, "Required property 'resource' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def container_name(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef#containerName
        '''
        result = self._values.get("container_name")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def divisor(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor"]:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef#divisor
        '''
        result = self._values.get("divisor")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor",
):
    '''
    :schema: InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__69f329b8988abbf9860e7b663166f422c05dfde80e30073d88992ef0e81192b6)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__c16186c3590c5878b8d4517e7dae3d8e5735ef3d6ef0b9e3a4b6c76202e8a76e)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef",
    jsii_struct_bases=[],
    name_mapping={"key": "key", "name": "name", "optional": "optional"},
)
class InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef:
    def __init__(
        self,
        *,
        key: builtins.str,
        name: builtins.str,
        optional: typing.Optional[builtins.bool] = None,
    ) -> None:
        '''``ConfigMapKeySelector`` / ``SecretKeySelector``.

        :param key: 
        :param name: 
        :param optional: 

        :schema: InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__519bde725df4789c0424fc0a6e2c8327794f67d369e8cfe013e33131721114a9)
            check_type(argname="argument key", value=key, expected_type=type_hints["key"])
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument optional", value=optional, expected_type=type_hints["optional"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "key": key,
            "name": name,
        }
        if optional is not None:
            self._values["optional"] = optional

    @builtins.property
    def key(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef#key
        '''
        result = self._values.get("key")
        assert result is not None, "Required property 'key' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def name(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def optional(self) -> typing.Optional[builtins.bool]:
        '''
        :schema: InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef#optional
        '''
        result = self._values.get("optional")
        return typing.cast(typing.Optional[builtins.bool], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerPort",
    jsii_struct_bases=[],
    name_mapping={"container_port": "containerPort", "name": "name"},
)
class InferenceRuntimeSpecContainerPort:
    def __init__(
        self,
        *,
        container_port: typing.Optional[jsii.Number] = None,
        name: typing.Optional[builtins.str] = None,
    ) -> None:
        '''The serving port.

        :param container_port: Port number the server listens on; when unset, the family's default port (vllm 8000, sglang 30000, tgi 80, llamacpp 8080).
        :param name: Port name (a DNS label of at most 15 characters).

        :schema: InferenceRuntimeSpecContainerPort
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__e1a90c4e731d55bf5ae1c60500942539b961c8acecaa2f198ffbbcdf3983809e)
            check_type(argname="argument container_port", value=container_port, expected_type=type_hints["container_port"])
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if container_port is not None:
            self._values["container_port"] = container_port
        if name is not None:
            self._values["name"] = name

    @builtins.property
    def container_port(self) -> typing.Optional[jsii.Number]:
        '''Port number the server listens on;

        when unset, the family's default port (vllm 8000, sglang 30000, tgi 80, llamacpp 8080).

        :schema: InferenceRuntimeSpecContainerPort#containerPort
        '''
        result = self._values.get("container_port")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def name(self) -> typing.Optional[builtins.str]:
        '''Port name (a DNS label of at most 15 characters).

        :schema: InferenceRuntimeSpecContainerPort#name
        '''
        result = self._values.get("name")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerPort(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerVolumeMounts",
    jsii_struct_bases=[],
    name_mapping={
        "mount_path": "mountPath",
        "name": "name",
        "read_only": "readOnly",
        "sub_path": "subPath",
    },
)
class InferenceRuntimeSpecContainerVolumeMounts:
    def __init__(
        self,
        *,
        mount_path: builtins.str,
        name: builtins.str,
        read_only: typing.Optional[builtins.bool] = None,
        sub_path: typing.Optional[builtins.str] = None,
    ) -> None:
        '''Extension: where the serving container sees one of ``container.volumes``.

        :param mount_path: Absolute path in the container; not Noctaya's own /cache, /models or /dev/shm.
        :param name: The volume (one of container.volumes).
        :param read_only: Mount read-only.
        :param sub_path: A relative path inside the volume (no '..').

        :schema: InferenceRuntimeSpecContainerVolumeMounts
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__f67154c5b70e3f8699594e5e4e0063674f0560a3e93d0ce7ba648ea45971a8b1)
            check_type(argname="argument mount_path", value=mount_path, expected_type=type_hints["mount_path"])
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument read_only", value=read_only, expected_type=type_hints["read_only"])
            check_type(argname="argument sub_path", value=sub_path, expected_type=type_hints["sub_path"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "mount_path": mount_path,
            "name": name,
        }
        if read_only is not None:
            self._values["read_only"] = read_only
        if sub_path is not None:
            self._values["sub_path"] = sub_path

    @builtins.property
    def mount_path(self) -> builtins.str:
        '''Absolute path in the container;

        not Noctaya's own /cache, /models or /dev/shm.

        :schema: InferenceRuntimeSpecContainerVolumeMounts#mountPath
        '''
        result = self._values.get("mount_path")
        assert result is not None, "Required property 'mount_path' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def name(self) -> builtins.str:
        '''The volume (one of container.volumes).

        :schema: InferenceRuntimeSpecContainerVolumeMounts#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def read_only(self) -> typing.Optional[builtins.bool]:
        '''Mount read-only.

        :schema: InferenceRuntimeSpecContainerVolumeMounts#readOnly
        '''
        result = self._values.get("read_only")
        return typing.cast(typing.Optional[builtins.bool], result)

    @builtins.property
    def sub_path(self) -> typing.Optional[builtins.str]:
        '''A relative path inside the volume (no '..').

        :schema: InferenceRuntimeSpecContainerVolumeMounts#subPath
        '''
        result = self._values.get("sub_path")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerVolumeMounts(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerVolumes",
    jsii_struct_bases=[],
    name_mapping={
        "name": "name",
        "config_map": "configMap",
        "empty_dir": "emptyDir",
        "host_path": "hostPath",
        "secret": "secret",
    },
)
class InferenceRuntimeSpecContainerVolumes:
    def __init__(
        self,
        *,
        name: builtins.str,
        config_map: typing.Optional[typing.Union["InferenceRuntimeSpecContainerVolumesConfigMap", typing.Dict[builtins.str, typing.Any]]] = None,
        empty_dir: typing.Optional[typing.Union["InferenceRuntimeSpecContainerVolumesEmptyDir", typing.Dict[builtins.str, typing.Any]]] = None,
        host_path: typing.Optional[typing.Union["InferenceRuntimeSpecContainerVolumesHostPath", typing.Dict[builtins.str, typing.Any]]] = None,
        secret: typing.Optional[typing.Union["InferenceRuntimeSpecContainerVolumesSecret", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''Extension: a volume of the backend Pod, one of a safe subset of Kubernetes' sources.

        :param name: Volume name (a DNS label), referenced by volumeMounts.
        :param config_map: A ConfigMap's keys as files.
        :param empty_dir: Pod-lifetime scratch space.
        :param host_path: A node file or directory.
        :param secret: A Secret's keys as read-only files.

        :schema: InferenceRuntimeSpecContainerVolumes
        '''
        if isinstance(config_map, dict):
            config_map = InferenceRuntimeSpecContainerVolumesConfigMap(**config_map)
        if isinstance(empty_dir, dict):
            empty_dir = InferenceRuntimeSpecContainerVolumesEmptyDir(**empty_dir)
        if isinstance(host_path, dict):
            host_path = InferenceRuntimeSpecContainerVolumesHostPath(**host_path)
        if isinstance(secret, dict):
            secret = InferenceRuntimeSpecContainerVolumesSecret(**secret)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__776e50e9d1f96d4205a49febd19738b0e75bead65d7d88db39c4d3a65a1db38c)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument config_map", value=config_map, expected_type=type_hints["config_map"])
            check_type(argname="argument empty_dir", value=empty_dir, expected_type=type_hints["empty_dir"])
            check_type(argname="argument host_path", value=host_path, expected_type=type_hints["host_path"])
            check_type(argname="argument secret", value=secret, expected_type=type_hints["secret"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
        }
        if config_map is not None:
            self._values["config_map"] = config_map
        if empty_dir is not None:
            self._values["empty_dir"] = empty_dir
        if host_path is not None:
            self._values["host_path"] = host_path
        if secret is not None:
            self._values["secret"] = secret

    @builtins.property
    def name(self) -> builtins.str:
        '''Volume name (a DNS label), referenced by volumeMounts.

        :schema: InferenceRuntimeSpecContainerVolumes#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def config_map(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerVolumesConfigMap"]:
        '''A ConfigMap's keys as files.

        :schema: InferenceRuntimeSpecContainerVolumes#configMap
        '''
        result = self._values.get("config_map")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerVolumesConfigMap"], result)

    @builtins.property
    def empty_dir(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerVolumesEmptyDir"]:
        '''Pod-lifetime scratch space.

        :schema: InferenceRuntimeSpecContainerVolumes#emptyDir
        '''
        result = self._values.get("empty_dir")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerVolumesEmptyDir"], result)

    @builtins.property
    def host_path(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerVolumesHostPath"]:
        '''A node file or directory.

        :schema: InferenceRuntimeSpecContainerVolumes#hostPath
        '''
        result = self._values.get("host_path")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerVolumesHostPath"], result)

    @builtins.property
    def secret(self) -> typing.Optional["InferenceRuntimeSpecContainerVolumesSecret"]:
        '''A Secret's keys as read-only files.

        :schema: InferenceRuntimeSpecContainerVolumes#secret
        '''
        result = self._values.get("secret")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerVolumesSecret"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerVolumes(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerVolumesConfigMap",
    jsii_struct_bases=[],
    name_mapping={"name": "name", "optional": "optional"},
)
class InferenceRuntimeSpecContainerVolumesConfigMap:
    def __init__(
        self,
        *,
        name: builtins.str,
        optional: typing.Optional[builtins.bool] = None,
    ) -> None:
        '''A ConfigMap's keys as files.

        :param name: ConfigMap name.
        :param optional: Start even when the ConfigMap is missing.

        :schema: InferenceRuntimeSpecContainerVolumesConfigMap
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__981805802a8abe5dd8036d90af933067128698fb521f43b4bd8d5181a9699b9e)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument optional", value=optional, expected_type=type_hints["optional"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
        }
        if optional is not None:
            self._values["optional"] = optional

    @builtins.property
    def name(self) -> builtins.str:
        '''ConfigMap name.

        :schema: InferenceRuntimeSpecContainerVolumesConfigMap#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def optional(self) -> typing.Optional[builtins.bool]:
        '''Start even when the ConfigMap is missing.

        :schema: InferenceRuntimeSpecContainerVolumesConfigMap#optional
        '''
        result = self._values.get("optional")
        return typing.cast(typing.Optional[builtins.bool], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerVolumesConfigMap(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerVolumesEmptyDir",
    jsii_struct_bases=[],
    name_mapping={"medium": "medium", "size_limit": "sizeLimit"},
)
class InferenceRuntimeSpecContainerVolumesEmptyDir:
    def __init__(
        self,
        *,
        medium: typing.Optional["InferenceRuntimeSpecContainerVolumesEmptyDirMedium"] = None,
        size_limit: typing.Optional["InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit"] = None,
    ) -> None:
        '''Pod-lifetime scratch space.

        :param medium: Node storage (unset) or memory (Memory; counts against the container's memory limit).
        :param size_limit: Upper bound of the space used.

        :schema: InferenceRuntimeSpecContainerVolumesEmptyDir
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__84011130bb1242d8bc184d7ab0b8c5b079f681afca60cc3cd934685de4d57012)
            check_type(argname="argument medium", value=medium, expected_type=type_hints["medium"])
            check_type(argname="argument size_limit", value=size_limit, expected_type=type_hints["size_limit"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if medium is not None:
            self._values["medium"] = medium
        if size_limit is not None:
            self._values["size_limit"] = size_limit

    @builtins.property
    def medium(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerVolumesEmptyDirMedium"]:
        '''Node storage (unset) or memory (Memory;

        counts against the container's memory limit).

        :schema: InferenceRuntimeSpecContainerVolumesEmptyDir#medium
        '''
        result = self._values.get("medium")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerVolumesEmptyDirMedium"], result)

    @builtins.property
    def size_limit(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit"]:
        '''Upper bound of the space used.

        :schema: InferenceRuntimeSpecContainerVolumesEmptyDir#sizeLimit
        '''
        result = self._values.get("size_limit")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerVolumesEmptyDir(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.enum(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerVolumesEmptyDirMedium"
)
class InferenceRuntimeSpecContainerVolumesEmptyDirMedium(enum.Enum):
    '''Node storage (unset) or memory (Memory;

    counts against the container's memory limit).

    :schema: InferenceRuntimeSpecContainerVolumesEmptyDirMedium
    '''

    MEMORY = "MEMORY"
    '''Memory.'''


class InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit",
):
    '''Upper bound of the space used.

    :schema: InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__81c7511966f5c4927a7193f528b048cad54abe9f4aaa20522ce37f8b170541c7)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__9d7dad9de2590ad6d2997fda4c257fcf12f5e2534c3ed16aa19d252efd191231)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerVolumesHostPath",
    jsii_struct_bases=[],
    name_mapping={"path": "path", "type": "type"},
)
class InferenceRuntimeSpecContainerVolumesHostPath:
    def __init__(
        self,
        *,
        path: builtins.str,
        type: typing.Optional["InferenceRuntimeSpecContainerVolumesHostPathType"] = None,
    ) -> None:
        '''A node file or directory.

        :param path: Absolute path on the node.
        :param type: What must exist at the path (Kubernetes' hostPath types); unset checks nothing.

        :schema: InferenceRuntimeSpecContainerVolumesHostPath
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__d349511647f8c1284b74cf82ba884902321f4c16fbe77537cf022aafd2927882)
            check_type(argname="argument path", value=path, expected_type=type_hints["path"])
            check_type(argname="argument type", value=type, expected_type=type_hints["type"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "path": path,
        }
        if type is not None:
            self._values["type"] = type

    @builtins.property
    def path(self) -> builtins.str:
        '''Absolute path on the node.

        :schema: InferenceRuntimeSpecContainerVolumesHostPath#path
        '''
        result = self._values.get("path")
        assert result is not None, "Required property 'path' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def type(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecContainerVolumesHostPathType"]:
        '''What must exist at the path (Kubernetes' hostPath types);

        unset checks nothing.

        :schema: InferenceRuntimeSpecContainerVolumesHostPath#type
        '''
        result = self._values.get("type")
        return typing.cast(typing.Optional["InferenceRuntimeSpecContainerVolumesHostPathType"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerVolumesHostPath(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.enum(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerVolumesHostPathType"
)
class InferenceRuntimeSpecContainerVolumesHostPathType(enum.Enum):
    '''What must exist at the path (Kubernetes' hostPath types);

    unset checks nothing.

    :schema: InferenceRuntimeSpecContainerVolumesHostPathType
    '''

    DIRECTORY_OR_CREATE = "DIRECTORY_OR_CREATE"
    '''DirectoryOrCreate.'''
    DIRECTORY = "DIRECTORY"
    '''Directory.'''
    FILE_OR_CREATE = "FILE_OR_CREATE"
    '''FileOrCreate.'''
    FILE = "FILE"
    '''File.'''
    SOCKET = "SOCKET"
    '''Socket.'''
    CHAR_DEVICE = "CHAR_DEVICE"
    '''CharDevice.'''
    BLOCK_DEVICE = "BLOCK_DEVICE"
    '''BlockDevice.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecContainerVolumesSecret",
    jsii_struct_bases=[],
    name_mapping={"secret_name": "secretName", "optional": "optional"},
)
class InferenceRuntimeSpecContainerVolumesSecret:
    def __init__(
        self,
        *,
        secret_name: builtins.str,
        optional: typing.Optional[builtins.bool] = None,
    ) -> None:
        '''A Secret's keys as read-only files.

        :param secret_name: Secret name.
        :param optional: Start even when the Secret is missing.

        :schema: InferenceRuntimeSpecContainerVolumesSecret
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__d4ac6ed8b7f2029269d9bc1ef705be63695dcf942099b92a2f62fa2bc021460a)
            check_type(argname="argument secret_name", value=secret_name, expected_type=type_hints["secret_name"])
            check_type(argname="argument optional", value=optional, expected_type=type_hints["optional"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "secret_name": secret_name,
        }
        if optional is not None:
            self._values["optional"] = optional

    @builtins.property
    def secret_name(self) -> builtins.str:
        '''Secret name.

        :schema: InferenceRuntimeSpecContainerVolumesSecret#secretName
        '''
        result = self._values.get("secret_name")
        assert result is not None, "Required property 'secret_name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def optional(self) -> typing.Optional[builtins.bool]:
        '''Start even when the Secret is missing.

        :schema: InferenceRuntimeSpecContainerVolumesSecret#optional
        '''
        result = self._values.get("optional")
        return typing.cast(typing.Optional[builtins.bool], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecContainerVolumesSecret(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.enum(jsii_type="ionoctayaserving.InferenceRuntimeSpecFamily")
class InferenceRuntimeSpecFamily(enum.Enum):
    '''Serving engine family.

    :schema: InferenceRuntimeSpecFamily
    '''

    VLLM = "VLLM"
    '''vllm.'''
    SGLANG = "SGLANG"
    '''sglang.'''
    TGI = "TGI"
    '''tgi.'''
    LLAMACPP = "LLAMACPP"
    '''llamacpp.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealth",
    jsii_struct_bases=[],
    name_mapping={
        "liveness": "liveness",
        "readiness": "readiness",
        "startup": "startup",
    },
)
class InferenceRuntimeSpecHealth:
    def __init__(
        self,
        *,
        liveness: typing.Optional[typing.Union["InferenceRuntimeSpecHealthLiveness", typing.Dict[builtins.str, typing.Any]]] = None,
        readiness: typing.Optional[typing.Union["InferenceRuntimeSpecHealthReadiness", typing.Dict[builtins.str, typing.Any]]] = None,
        startup: typing.Optional[typing.Union["InferenceRuntimeSpecHealthStartup", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''Probes of the serving container.

        :param liveness: Liveness probe; none when unset.
        :param readiness: Readiness probe; GET /health on the serving port when unset.
        :param startup: Startup probe; GET /health every 10s up to 60 failures when unset.

        :schema: InferenceRuntimeSpecHealth
        '''
        if isinstance(liveness, dict):
            liveness = InferenceRuntimeSpecHealthLiveness(**liveness)
        if isinstance(readiness, dict):
            readiness = InferenceRuntimeSpecHealthReadiness(**readiness)
        if isinstance(startup, dict):
            startup = InferenceRuntimeSpecHealthStartup(**startup)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__49dfab2c4c96b5d81d80523d7bf5ce54967ae706bf393b40c3e261d937a41db3)
            check_type(argname="argument liveness", value=liveness, expected_type=type_hints["liveness"])
            check_type(argname="argument readiness", value=readiness, expected_type=type_hints["readiness"])
            check_type(argname="argument startup", value=startup, expected_type=type_hints["startup"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if liveness is not None:
            self._values["liveness"] = liveness
        if readiness is not None:
            self._values["readiness"] = readiness
        if startup is not None:
            self._values["startup"] = startup

    @builtins.property
    def liveness(self) -> typing.Optional["InferenceRuntimeSpecHealthLiveness"]:
        '''Liveness probe;

        none when unset.

        :schema: InferenceRuntimeSpecHealth#liveness
        '''
        result = self._values.get("liveness")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthLiveness"], result)

    @builtins.property
    def readiness(self) -> typing.Optional["InferenceRuntimeSpecHealthReadiness"]:
        '''Readiness probe;

        GET /health on the serving port when unset.

        :schema: InferenceRuntimeSpecHealth#readiness
        '''
        result = self._values.get("readiness")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthReadiness"], result)

    @builtins.property
    def startup(self) -> typing.Optional["InferenceRuntimeSpecHealthStartup"]:
        '''Startup probe;

        GET /health every 10s up to 60 failures when unset.

        :schema: InferenceRuntimeSpecHealth#startup
        '''
        result = self._values.get("startup")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthStartup"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealth(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthLiveness",
    jsii_struct_bases=[],
    name_mapping={
        "exec": "exec",
        "failure_threshold": "failureThreshold",
        "grpc": "grpc",
        "http_get": "httpGet",
        "initial_delay_seconds": "initialDelaySeconds",
        "period_seconds": "periodSeconds",
        "success_threshold": "successThreshold",
        "tcp_socket": "tcpSocket",
        "termination_grace_period_seconds": "terminationGracePeriodSeconds",
        "timeout_seconds": "timeoutSeconds",
    },
)
class InferenceRuntimeSpecHealthLiveness:
    def __init__(
        self,
        *,
        exec: typing.Optional[typing.Union["InferenceRuntimeSpecHealthLivenessExec", typing.Dict[builtins.str, typing.Any]]] = None,
        failure_threshold: typing.Optional[jsii.Number] = None,
        grpc: typing.Optional[typing.Union["InferenceRuntimeSpecHealthLivenessGrpc", typing.Dict[builtins.str, typing.Any]]] = None,
        http_get: typing.Optional[typing.Union["InferenceRuntimeSpecHealthLivenessHttpGet", typing.Dict[builtins.str, typing.Any]]] = None,
        initial_delay_seconds: typing.Optional[jsii.Number] = None,
        period_seconds: typing.Optional[jsii.Number] = None,
        success_threshold: typing.Optional[jsii.Number] = None,
        tcp_socket: typing.Optional[typing.Union["InferenceRuntimeSpecHealthLivenessTcpSocket", typing.Dict[builtins.str, typing.Any]]] = None,
        termination_grace_period_seconds: typing.Optional[jsii.Number] = None,
        timeout_seconds: typing.Optional[jsii.Number] = None,
    ) -> None:
        '''Liveness probe;

        none when unset.

        :param exec: 
        :param failure_threshold: 
        :param grpc: 
        :param http_get: 
        :param initial_delay_seconds: 
        :param period_seconds: 
        :param success_threshold: 
        :param tcp_socket: 
        :param termination_grace_period_seconds: 
        :param timeout_seconds: 

        :schema: InferenceRuntimeSpecHealthLiveness
        '''
        if isinstance(exec, dict):
            exec = InferenceRuntimeSpecHealthLivenessExec(**exec)
        if isinstance(grpc, dict):
            grpc = InferenceRuntimeSpecHealthLivenessGrpc(**grpc)
        if isinstance(http_get, dict):
            http_get = InferenceRuntimeSpecHealthLivenessHttpGet(**http_get)
        if isinstance(tcp_socket, dict):
            tcp_socket = InferenceRuntimeSpecHealthLivenessTcpSocket(**tcp_socket)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__bc1a90d3d97ba7a048ec1941e6d70ebe28a1a36c7c34178bf1661bca6763fb3a)
            check_type(argname="argument exec", value=exec, expected_type=type_hints["exec"])
            check_type(argname="argument failure_threshold", value=failure_threshold, expected_type=type_hints["failure_threshold"])
            check_type(argname="argument grpc", value=grpc, expected_type=type_hints["grpc"])
            check_type(argname="argument http_get", value=http_get, expected_type=type_hints["http_get"])
            check_type(argname="argument initial_delay_seconds", value=initial_delay_seconds, expected_type=type_hints["initial_delay_seconds"])
            check_type(argname="argument period_seconds", value=period_seconds, expected_type=type_hints["period_seconds"])
            check_type(argname="argument success_threshold", value=success_threshold, expected_type=type_hints["success_threshold"])
            check_type(argname="argument tcp_socket", value=tcp_socket, expected_type=type_hints["tcp_socket"])
            check_type(argname="argument termination_grace_period_seconds", value=termination_grace_period_seconds, expected_type=type_hints["termination_grace_period_seconds"])
            check_type(argname="argument timeout_seconds", value=timeout_seconds, expected_type=type_hints["timeout_seconds"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if exec is not None:
            self._values["exec"] = exec
        if failure_threshold is not None:
            self._values["failure_threshold"] = failure_threshold
        if grpc is not None:
            self._values["grpc"] = grpc
        if http_get is not None:
            self._values["http_get"] = http_get
        if initial_delay_seconds is not None:
            self._values["initial_delay_seconds"] = initial_delay_seconds
        if period_seconds is not None:
            self._values["period_seconds"] = period_seconds
        if success_threshold is not None:
            self._values["success_threshold"] = success_threshold
        if tcp_socket is not None:
            self._values["tcp_socket"] = tcp_socket
        if termination_grace_period_seconds is not None:
            self._values["termination_grace_period_seconds"] = termination_grace_period_seconds
        if timeout_seconds is not None:
            self._values["timeout_seconds"] = timeout_seconds

    @builtins.property
    def exec(self) -> typing.Optional["InferenceRuntimeSpecHealthLivenessExec"]:
        '''
        :schema: InferenceRuntimeSpecHealthLiveness#exec
        '''
        result = self._values.get("exec")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthLivenessExec"], result)

    @builtins.property
    def failure_threshold(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthLiveness#failureThreshold
        '''
        result = self._values.get("failure_threshold")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def grpc(self) -> typing.Optional["InferenceRuntimeSpecHealthLivenessGrpc"]:
        '''
        :schema: InferenceRuntimeSpecHealthLiveness#grpc
        '''
        result = self._values.get("grpc")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthLivenessGrpc"], result)

    @builtins.property
    def http_get(self) -> typing.Optional["InferenceRuntimeSpecHealthLivenessHttpGet"]:
        '''
        :schema: InferenceRuntimeSpecHealthLiveness#httpGet
        '''
        result = self._values.get("http_get")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthLivenessHttpGet"], result)

    @builtins.property
    def initial_delay_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthLiveness#initialDelaySeconds
        '''
        result = self._values.get("initial_delay_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def period_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthLiveness#periodSeconds
        '''
        result = self._values.get("period_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def success_threshold(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthLiveness#successThreshold
        '''
        result = self._values.get("success_threshold")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def tcp_socket(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecHealthLivenessTcpSocket"]:
        '''
        :schema: InferenceRuntimeSpecHealthLiveness#tcpSocket
        '''
        result = self._values.get("tcp_socket")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthLivenessTcpSocket"], result)

    @builtins.property
    def termination_grace_period_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthLiveness#terminationGracePeriodSeconds
        '''
        result = self._values.get("termination_grace_period_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def timeout_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthLiveness#timeoutSeconds
        '''
        result = self._values.get("timeout_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthLiveness(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthLivenessExec",
    jsii_struct_bases=[],
    name_mapping={"command": "command"},
)
class InferenceRuntimeSpecHealthLivenessExec:
    def __init__(self, *, command: typing.Sequence[builtins.str]) -> None:
        '''
        :param command: 

        :schema: InferenceRuntimeSpecHealthLivenessExec
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__6f3210a6c2d9856fa391fcdb7fbca23f946d1fd3f6cc74acc6dac308d0f82845)
            check_type(argname="argument command", value=command, expected_type=type_hints["command"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "command": command,
        }

    @builtins.property
    def command(self) -> typing.List[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthLivenessExec#command
        '''
        result = self._values.get("command")
        assert result is not None, "Required property 'command' is missing"
        return typing.cast(typing.List[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthLivenessExec(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthLivenessGrpc",
    jsii_struct_bases=[],
    name_mapping={"port": "port", "service": "service"},
)
class InferenceRuntimeSpecHealthLivenessGrpc:
    def __init__(
        self,
        *,
        port: jsii.Number,
        service: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param port: 
        :param service: 

        :schema: InferenceRuntimeSpecHealthLivenessGrpc
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__79efb1aa1959746fb962d9f10c07690d21e9943bc0b1baf1f2d836d7be57bb0e)
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument service", value=service, expected_type=type_hints["service"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "port": port,
        }
        if service is not None:
            self._values["service"] = service

    @builtins.property
    def port(self) -> jsii.Number:
        '''
        :schema: InferenceRuntimeSpecHealthLivenessGrpc#port
        '''
        result = self._values.get("port")
        assert result is not None, "Required property 'port' is missing"
        return typing.cast(jsii.Number, result)

    @builtins.property
    def service(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthLivenessGrpc#service
        '''
        result = self._values.get("service")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthLivenessGrpc(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthLivenessHttpGet",
    jsii_struct_bases=[],
    name_mapping={
        "port": "port",
        "host": "host",
        "http_headers": "httpHeaders",
        "path": "path",
        "scheme": "scheme",
    },
)
class InferenceRuntimeSpecHealthLivenessHttpGet:
    def __init__(
        self,
        *,
        port: "InferenceRuntimeSpecHealthLivenessHttpGetPort",
        host: typing.Optional[builtins.str] = None,
        http_headers: typing.Optional[typing.Sequence[typing.Union["InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders", typing.Dict[builtins.str, typing.Any]]]] = None,
        path: typing.Optional[builtins.str] = None,
        scheme: typing.Optional["InferenceRuntimeSpecHealthLivenessHttpGetScheme"] = None,
    ) -> None:
        '''
        :param port: 
        :param host: 
        :param http_headers: 
        :param path: 
        :param scheme: 

        :schema: InferenceRuntimeSpecHealthLivenessHttpGet
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__22150bcb88ca1490056dfb32cf5c281045fdbc8a31dc968a1355b85b2d16e1e2)
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument host", value=host, expected_type=type_hints["host"])
            check_type(argname="argument http_headers", value=http_headers, expected_type=type_hints["http_headers"])
            check_type(argname="argument path", value=path, expected_type=type_hints["path"])
            check_type(argname="argument scheme", value=scheme, expected_type=type_hints["scheme"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "port": port,
        }
        if host is not None:
            self._values["host"] = host
        if http_headers is not None:
            self._values["http_headers"] = http_headers
        if path is not None:
            self._values["path"] = path
        if scheme is not None:
            self._values["scheme"] = scheme

    @builtins.property
    def port(self) -> "InferenceRuntimeSpecHealthLivenessHttpGetPort":
        '''
        :schema: InferenceRuntimeSpecHealthLivenessHttpGet#port
        '''
        result = self._values.get("port")
        assert result is not None, "Required property 'port' is missing"
        return typing.cast("InferenceRuntimeSpecHealthLivenessHttpGetPort", result)

    @builtins.property
    def host(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthLivenessHttpGet#host
        '''
        result = self._values.get("host")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def http_headers(
        self,
    ) -> typing.Optional[typing.List["InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders"]]:
        '''
        :schema: InferenceRuntimeSpecHealthLivenessHttpGet#httpHeaders
        '''
        result = self._values.get("http_headers")
        return typing.cast(typing.Optional[typing.List["InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders"]], result)

    @builtins.property
    def path(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthLivenessHttpGet#path
        '''
        result = self._values.get("path")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def scheme(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecHealthLivenessHttpGetScheme"]:
        '''
        :schema: InferenceRuntimeSpecHealthLivenessHttpGet#scheme
        '''
        result = self._values.get("scheme")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthLivenessHttpGetScheme"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthLivenessHttpGet(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders",
    jsii_struct_bases=[],
    name_mapping={"name": "name", "value": "value"},
)
class InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders:
    def __init__(self, *, name: builtins.str, value: builtins.str) -> None:
        '''
        :param name: 
        :param value: 

        :schema: InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__9972239e85a27abbf3d42ac23c8e96d67becc2774695ebac2b1c9e68aa414367)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
            "value": value,
        }

    @builtins.property
    def name(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def value(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders#value
        '''
        result = self._values.get("value")
        assert result is not None, "Required property 'value' is missing"
        return typing.cast(builtins.str, result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class InferenceRuntimeSpecHealthLivenessHttpGetPort(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthLivenessHttpGetPort",
):
    '''
    :schema: InferenceRuntimeSpecHealthLivenessHttpGetPort
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "InferenceRuntimeSpecHealthLivenessHttpGetPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__599e315c0c611f3da58d2115e3e2a527e83776aae2bbf41482c49465285c8d62)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthLivenessHttpGetPort", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "InferenceRuntimeSpecHealthLivenessHttpGetPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__fb27cc27f8979034edc9e0c4fbe4c90e35942fc3c6f8b5beec299fe71b4eba2a)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthLivenessHttpGetPort", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.enum(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthLivenessHttpGetScheme"
)
class InferenceRuntimeSpecHealthLivenessHttpGetScheme(enum.Enum):
    '''
    :schema: InferenceRuntimeSpecHealthLivenessHttpGetScheme
    '''

    HTTP = "HTTP"
    '''HTTP.'''
    HTTPS = "HTTPS"
    '''HTTPS.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthLivenessTcpSocket",
    jsii_struct_bases=[],
    name_mapping={"port": "port", "host": "host"},
)
class InferenceRuntimeSpecHealthLivenessTcpSocket:
    def __init__(
        self,
        *,
        port: "InferenceRuntimeSpecHealthLivenessTcpSocketPort",
        host: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param port: 
        :param host: 

        :schema: InferenceRuntimeSpecHealthLivenessTcpSocket
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__3c910607916a470695b9ed2dc4bf12d606e9bbc8c48c7ffbae1e32e8fd9b5865)
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument host", value=host, expected_type=type_hints["host"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "port": port,
        }
        if host is not None:
            self._values["host"] = host

    @builtins.property
    def port(self) -> "InferenceRuntimeSpecHealthLivenessTcpSocketPort":
        '''
        :schema: InferenceRuntimeSpecHealthLivenessTcpSocket#port
        '''
        result = self._values.get("port")
        assert result is not None, "Required property 'port' is missing"
        return typing.cast("InferenceRuntimeSpecHealthLivenessTcpSocketPort", result)

    @builtins.property
    def host(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthLivenessTcpSocket#host
        '''
        result = self._values.get("host")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthLivenessTcpSocket(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class InferenceRuntimeSpecHealthLivenessTcpSocketPort(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthLivenessTcpSocketPort",
):
    '''
    :schema: InferenceRuntimeSpecHealthLivenessTcpSocketPort
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "InferenceRuntimeSpecHealthLivenessTcpSocketPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__fa6bca4c94c4a12b9b5bb3b20e43f7a843155b9cbc25aff590b8c2f01ed10412)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthLivenessTcpSocketPort", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "InferenceRuntimeSpecHealthLivenessTcpSocketPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__0f57a5519f055f18f3595590516c78bc68710862a1dedf55d7ae33047adbdebf)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthLivenessTcpSocketPort", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthReadiness",
    jsii_struct_bases=[],
    name_mapping={
        "exec": "exec",
        "failure_threshold": "failureThreshold",
        "grpc": "grpc",
        "http_get": "httpGet",
        "initial_delay_seconds": "initialDelaySeconds",
        "period_seconds": "periodSeconds",
        "success_threshold": "successThreshold",
        "tcp_socket": "tcpSocket",
        "termination_grace_period_seconds": "terminationGracePeriodSeconds",
        "timeout_seconds": "timeoutSeconds",
    },
)
class InferenceRuntimeSpecHealthReadiness:
    def __init__(
        self,
        *,
        exec: typing.Optional[typing.Union["InferenceRuntimeSpecHealthReadinessExec", typing.Dict[builtins.str, typing.Any]]] = None,
        failure_threshold: typing.Optional[jsii.Number] = None,
        grpc: typing.Optional[typing.Union["InferenceRuntimeSpecHealthReadinessGrpc", typing.Dict[builtins.str, typing.Any]]] = None,
        http_get: typing.Optional[typing.Union["InferenceRuntimeSpecHealthReadinessHttpGet", typing.Dict[builtins.str, typing.Any]]] = None,
        initial_delay_seconds: typing.Optional[jsii.Number] = None,
        period_seconds: typing.Optional[jsii.Number] = None,
        success_threshold: typing.Optional[jsii.Number] = None,
        tcp_socket: typing.Optional[typing.Union["InferenceRuntimeSpecHealthReadinessTcpSocket", typing.Dict[builtins.str, typing.Any]]] = None,
        termination_grace_period_seconds: typing.Optional[jsii.Number] = None,
        timeout_seconds: typing.Optional[jsii.Number] = None,
    ) -> None:
        '''Readiness probe;

        GET /health on the serving port when unset.

        :param exec: 
        :param failure_threshold: 
        :param grpc: 
        :param http_get: 
        :param initial_delay_seconds: 
        :param period_seconds: 
        :param success_threshold: 
        :param tcp_socket: 
        :param termination_grace_period_seconds: 
        :param timeout_seconds: 

        :schema: InferenceRuntimeSpecHealthReadiness
        '''
        if isinstance(exec, dict):
            exec = InferenceRuntimeSpecHealthReadinessExec(**exec)
        if isinstance(grpc, dict):
            grpc = InferenceRuntimeSpecHealthReadinessGrpc(**grpc)
        if isinstance(http_get, dict):
            http_get = InferenceRuntimeSpecHealthReadinessHttpGet(**http_get)
        if isinstance(tcp_socket, dict):
            tcp_socket = InferenceRuntimeSpecHealthReadinessTcpSocket(**tcp_socket)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__a00eccf01838a7af17437b497b791f835c03477dce68d6796cccdc3bd3d29f21)
            check_type(argname="argument exec", value=exec, expected_type=type_hints["exec"])
            check_type(argname="argument failure_threshold", value=failure_threshold, expected_type=type_hints["failure_threshold"])
            check_type(argname="argument grpc", value=grpc, expected_type=type_hints["grpc"])
            check_type(argname="argument http_get", value=http_get, expected_type=type_hints["http_get"])
            check_type(argname="argument initial_delay_seconds", value=initial_delay_seconds, expected_type=type_hints["initial_delay_seconds"])
            check_type(argname="argument period_seconds", value=period_seconds, expected_type=type_hints["period_seconds"])
            check_type(argname="argument success_threshold", value=success_threshold, expected_type=type_hints["success_threshold"])
            check_type(argname="argument tcp_socket", value=tcp_socket, expected_type=type_hints["tcp_socket"])
            check_type(argname="argument termination_grace_period_seconds", value=termination_grace_period_seconds, expected_type=type_hints["termination_grace_period_seconds"])
            check_type(argname="argument timeout_seconds", value=timeout_seconds, expected_type=type_hints["timeout_seconds"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if exec is not None:
            self._values["exec"] = exec
        if failure_threshold is not None:
            self._values["failure_threshold"] = failure_threshold
        if grpc is not None:
            self._values["grpc"] = grpc
        if http_get is not None:
            self._values["http_get"] = http_get
        if initial_delay_seconds is not None:
            self._values["initial_delay_seconds"] = initial_delay_seconds
        if period_seconds is not None:
            self._values["period_seconds"] = period_seconds
        if success_threshold is not None:
            self._values["success_threshold"] = success_threshold
        if tcp_socket is not None:
            self._values["tcp_socket"] = tcp_socket
        if termination_grace_period_seconds is not None:
            self._values["termination_grace_period_seconds"] = termination_grace_period_seconds
        if timeout_seconds is not None:
            self._values["timeout_seconds"] = timeout_seconds

    @builtins.property
    def exec(self) -> typing.Optional["InferenceRuntimeSpecHealthReadinessExec"]:
        '''
        :schema: InferenceRuntimeSpecHealthReadiness#exec
        '''
        result = self._values.get("exec")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthReadinessExec"], result)

    @builtins.property
    def failure_threshold(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthReadiness#failureThreshold
        '''
        result = self._values.get("failure_threshold")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def grpc(self) -> typing.Optional["InferenceRuntimeSpecHealthReadinessGrpc"]:
        '''
        :schema: InferenceRuntimeSpecHealthReadiness#grpc
        '''
        result = self._values.get("grpc")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthReadinessGrpc"], result)

    @builtins.property
    def http_get(self) -> typing.Optional["InferenceRuntimeSpecHealthReadinessHttpGet"]:
        '''
        :schema: InferenceRuntimeSpecHealthReadiness#httpGet
        '''
        result = self._values.get("http_get")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthReadinessHttpGet"], result)

    @builtins.property
    def initial_delay_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthReadiness#initialDelaySeconds
        '''
        result = self._values.get("initial_delay_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def period_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthReadiness#periodSeconds
        '''
        result = self._values.get("period_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def success_threshold(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthReadiness#successThreshold
        '''
        result = self._values.get("success_threshold")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def tcp_socket(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecHealthReadinessTcpSocket"]:
        '''
        :schema: InferenceRuntimeSpecHealthReadiness#tcpSocket
        '''
        result = self._values.get("tcp_socket")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthReadinessTcpSocket"], result)

    @builtins.property
    def termination_grace_period_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthReadiness#terminationGracePeriodSeconds
        '''
        result = self._values.get("termination_grace_period_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def timeout_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthReadiness#timeoutSeconds
        '''
        result = self._values.get("timeout_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthReadiness(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthReadinessExec",
    jsii_struct_bases=[],
    name_mapping={"command": "command"},
)
class InferenceRuntimeSpecHealthReadinessExec:
    def __init__(self, *, command: typing.Sequence[builtins.str]) -> None:
        '''
        :param command: 

        :schema: InferenceRuntimeSpecHealthReadinessExec
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__1f0341f08bda43d9d4e15fc55b53b2c75c9b10fb828f5a8e256f60db86bbdebc)
            check_type(argname="argument command", value=command, expected_type=type_hints["command"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "command": command,
        }

    @builtins.property
    def command(self) -> typing.List[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthReadinessExec#command
        '''
        result = self._values.get("command")
        assert result is not None, "Required property 'command' is missing"
        return typing.cast(typing.List[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthReadinessExec(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthReadinessGrpc",
    jsii_struct_bases=[],
    name_mapping={"port": "port", "service": "service"},
)
class InferenceRuntimeSpecHealthReadinessGrpc:
    def __init__(
        self,
        *,
        port: jsii.Number,
        service: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param port: 
        :param service: 

        :schema: InferenceRuntimeSpecHealthReadinessGrpc
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__32e867df76205be9e2dd9811153854119123781eaab48cc0cd79364ad183dd14)
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument service", value=service, expected_type=type_hints["service"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "port": port,
        }
        if service is not None:
            self._values["service"] = service

    @builtins.property
    def port(self) -> jsii.Number:
        '''
        :schema: InferenceRuntimeSpecHealthReadinessGrpc#port
        '''
        result = self._values.get("port")
        assert result is not None, "Required property 'port' is missing"
        return typing.cast(jsii.Number, result)

    @builtins.property
    def service(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthReadinessGrpc#service
        '''
        result = self._values.get("service")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthReadinessGrpc(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthReadinessHttpGet",
    jsii_struct_bases=[],
    name_mapping={
        "port": "port",
        "host": "host",
        "http_headers": "httpHeaders",
        "path": "path",
        "scheme": "scheme",
    },
)
class InferenceRuntimeSpecHealthReadinessHttpGet:
    def __init__(
        self,
        *,
        port: "InferenceRuntimeSpecHealthReadinessHttpGetPort",
        host: typing.Optional[builtins.str] = None,
        http_headers: typing.Optional[typing.Sequence[typing.Union["InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders", typing.Dict[builtins.str, typing.Any]]]] = None,
        path: typing.Optional[builtins.str] = None,
        scheme: typing.Optional["InferenceRuntimeSpecHealthReadinessHttpGetScheme"] = None,
    ) -> None:
        '''
        :param port: 
        :param host: 
        :param http_headers: 
        :param path: 
        :param scheme: 

        :schema: InferenceRuntimeSpecHealthReadinessHttpGet
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__46da06a776f68e78ce15bcc924c774b26b0c902f6f24d43b9b4a82fcc06a6659)
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument host", value=host, expected_type=type_hints["host"])
            check_type(argname="argument http_headers", value=http_headers, expected_type=type_hints["http_headers"])
            check_type(argname="argument path", value=path, expected_type=type_hints["path"])
            check_type(argname="argument scheme", value=scheme, expected_type=type_hints["scheme"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "port": port,
        }
        if host is not None:
            self._values["host"] = host
        if http_headers is not None:
            self._values["http_headers"] = http_headers
        if path is not None:
            self._values["path"] = path
        if scheme is not None:
            self._values["scheme"] = scheme

    @builtins.property
    def port(self) -> "InferenceRuntimeSpecHealthReadinessHttpGetPort":
        '''
        :schema: InferenceRuntimeSpecHealthReadinessHttpGet#port
        '''
        result = self._values.get("port")
        assert result is not None, "Required property 'port' is missing"
        return typing.cast("InferenceRuntimeSpecHealthReadinessHttpGetPort", result)

    @builtins.property
    def host(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthReadinessHttpGet#host
        '''
        result = self._values.get("host")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def http_headers(
        self,
    ) -> typing.Optional[typing.List["InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders"]]:
        '''
        :schema: InferenceRuntimeSpecHealthReadinessHttpGet#httpHeaders
        '''
        result = self._values.get("http_headers")
        return typing.cast(typing.Optional[typing.List["InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders"]], result)

    @builtins.property
    def path(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthReadinessHttpGet#path
        '''
        result = self._values.get("path")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def scheme(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecHealthReadinessHttpGetScheme"]:
        '''
        :schema: InferenceRuntimeSpecHealthReadinessHttpGet#scheme
        '''
        result = self._values.get("scheme")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthReadinessHttpGetScheme"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthReadinessHttpGet(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders",
    jsii_struct_bases=[],
    name_mapping={"name": "name", "value": "value"},
)
class InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders:
    def __init__(self, *, name: builtins.str, value: builtins.str) -> None:
        '''
        :param name: 
        :param value: 

        :schema: InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__17fc816d26faad968c733503548c0d89e10482ee900470e4f27d3c863a8aca6b)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
            "value": value,
        }

    @builtins.property
    def name(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def value(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders#value
        '''
        result = self._values.get("value")
        assert result is not None, "Required property 'value' is missing"
        return typing.cast(builtins.str, result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class InferenceRuntimeSpecHealthReadinessHttpGetPort(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthReadinessHttpGetPort",
):
    '''
    :schema: InferenceRuntimeSpecHealthReadinessHttpGetPort
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "InferenceRuntimeSpecHealthReadinessHttpGetPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__7bf67546a9ca4cacbc2677b3f00b941f95aa5978e4169a0368c74a576326293b)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthReadinessHttpGetPort", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "InferenceRuntimeSpecHealthReadinessHttpGetPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__a916b53000266765cffca12fd249d3078e596a835b0a871935617999a92d3c01)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthReadinessHttpGetPort", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.enum(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthReadinessHttpGetScheme"
)
class InferenceRuntimeSpecHealthReadinessHttpGetScheme(enum.Enum):
    '''
    :schema: InferenceRuntimeSpecHealthReadinessHttpGetScheme
    '''

    HTTP = "HTTP"
    '''HTTP.'''
    HTTPS = "HTTPS"
    '''HTTPS.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthReadinessTcpSocket",
    jsii_struct_bases=[],
    name_mapping={"port": "port", "host": "host"},
)
class InferenceRuntimeSpecHealthReadinessTcpSocket:
    def __init__(
        self,
        *,
        port: "InferenceRuntimeSpecHealthReadinessTcpSocketPort",
        host: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param port: 
        :param host: 

        :schema: InferenceRuntimeSpecHealthReadinessTcpSocket
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__ffbb18fbe3da45c9246b9e2930a42e70a600b4af13980e26f6536570d49f7e35)
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument host", value=host, expected_type=type_hints["host"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "port": port,
        }
        if host is not None:
            self._values["host"] = host

    @builtins.property
    def port(self) -> "InferenceRuntimeSpecHealthReadinessTcpSocketPort":
        '''
        :schema: InferenceRuntimeSpecHealthReadinessTcpSocket#port
        '''
        result = self._values.get("port")
        assert result is not None, "Required property 'port' is missing"
        return typing.cast("InferenceRuntimeSpecHealthReadinessTcpSocketPort", result)

    @builtins.property
    def host(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthReadinessTcpSocket#host
        '''
        result = self._values.get("host")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthReadinessTcpSocket(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class InferenceRuntimeSpecHealthReadinessTcpSocketPort(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthReadinessTcpSocketPort",
):
    '''
    :schema: InferenceRuntimeSpecHealthReadinessTcpSocketPort
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "InferenceRuntimeSpecHealthReadinessTcpSocketPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__7cc7fb4993e49122420571166f5939cd2e67661078212623e4113e193eac46f9)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthReadinessTcpSocketPort", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "InferenceRuntimeSpecHealthReadinessTcpSocketPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__b4e56589f5d02d2a8b05fc45ab87f15ee39f34b24a207392bbfd30d9ddd84a7c)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthReadinessTcpSocketPort", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthStartup",
    jsii_struct_bases=[],
    name_mapping={
        "exec": "exec",
        "failure_threshold": "failureThreshold",
        "grpc": "grpc",
        "http_get": "httpGet",
        "initial_delay_seconds": "initialDelaySeconds",
        "period_seconds": "periodSeconds",
        "success_threshold": "successThreshold",
        "tcp_socket": "tcpSocket",
        "termination_grace_period_seconds": "terminationGracePeriodSeconds",
        "timeout_seconds": "timeoutSeconds",
    },
)
class InferenceRuntimeSpecHealthStartup:
    def __init__(
        self,
        *,
        exec: typing.Optional[typing.Union["InferenceRuntimeSpecHealthStartupExec", typing.Dict[builtins.str, typing.Any]]] = None,
        failure_threshold: typing.Optional[jsii.Number] = None,
        grpc: typing.Optional[typing.Union["InferenceRuntimeSpecHealthStartupGrpc", typing.Dict[builtins.str, typing.Any]]] = None,
        http_get: typing.Optional[typing.Union["InferenceRuntimeSpecHealthStartupHttpGet", typing.Dict[builtins.str, typing.Any]]] = None,
        initial_delay_seconds: typing.Optional[jsii.Number] = None,
        period_seconds: typing.Optional[jsii.Number] = None,
        success_threshold: typing.Optional[jsii.Number] = None,
        tcp_socket: typing.Optional[typing.Union["InferenceRuntimeSpecHealthStartupTcpSocket", typing.Dict[builtins.str, typing.Any]]] = None,
        termination_grace_period_seconds: typing.Optional[jsii.Number] = None,
        timeout_seconds: typing.Optional[jsii.Number] = None,
    ) -> None:
        '''Startup probe;

        GET /health every 10s up to 60 failures when unset.

        :param exec: 
        :param failure_threshold: 
        :param grpc: 
        :param http_get: 
        :param initial_delay_seconds: 
        :param period_seconds: 
        :param success_threshold: 
        :param tcp_socket: 
        :param termination_grace_period_seconds: 
        :param timeout_seconds: 

        :schema: InferenceRuntimeSpecHealthStartup
        '''
        if isinstance(exec, dict):
            exec = InferenceRuntimeSpecHealthStartupExec(**exec)
        if isinstance(grpc, dict):
            grpc = InferenceRuntimeSpecHealthStartupGrpc(**grpc)
        if isinstance(http_get, dict):
            http_get = InferenceRuntimeSpecHealthStartupHttpGet(**http_get)
        if isinstance(tcp_socket, dict):
            tcp_socket = InferenceRuntimeSpecHealthStartupTcpSocket(**tcp_socket)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__b6d0bcaf020d53c9b9e805958ed33b44229697204c44a8be828d9ac377e36415)
            check_type(argname="argument exec", value=exec, expected_type=type_hints["exec"])
            check_type(argname="argument failure_threshold", value=failure_threshold, expected_type=type_hints["failure_threshold"])
            check_type(argname="argument grpc", value=grpc, expected_type=type_hints["grpc"])
            check_type(argname="argument http_get", value=http_get, expected_type=type_hints["http_get"])
            check_type(argname="argument initial_delay_seconds", value=initial_delay_seconds, expected_type=type_hints["initial_delay_seconds"])
            check_type(argname="argument period_seconds", value=period_seconds, expected_type=type_hints["period_seconds"])
            check_type(argname="argument success_threshold", value=success_threshold, expected_type=type_hints["success_threshold"])
            check_type(argname="argument tcp_socket", value=tcp_socket, expected_type=type_hints["tcp_socket"])
            check_type(argname="argument termination_grace_period_seconds", value=termination_grace_period_seconds, expected_type=type_hints["termination_grace_period_seconds"])
            check_type(argname="argument timeout_seconds", value=timeout_seconds, expected_type=type_hints["timeout_seconds"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if exec is not None:
            self._values["exec"] = exec
        if failure_threshold is not None:
            self._values["failure_threshold"] = failure_threshold
        if grpc is not None:
            self._values["grpc"] = grpc
        if http_get is not None:
            self._values["http_get"] = http_get
        if initial_delay_seconds is not None:
            self._values["initial_delay_seconds"] = initial_delay_seconds
        if period_seconds is not None:
            self._values["period_seconds"] = period_seconds
        if success_threshold is not None:
            self._values["success_threshold"] = success_threshold
        if tcp_socket is not None:
            self._values["tcp_socket"] = tcp_socket
        if termination_grace_period_seconds is not None:
            self._values["termination_grace_period_seconds"] = termination_grace_period_seconds
        if timeout_seconds is not None:
            self._values["timeout_seconds"] = timeout_seconds

    @builtins.property
    def exec(self) -> typing.Optional["InferenceRuntimeSpecHealthStartupExec"]:
        '''
        :schema: InferenceRuntimeSpecHealthStartup#exec
        '''
        result = self._values.get("exec")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthStartupExec"], result)

    @builtins.property
    def failure_threshold(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthStartup#failureThreshold
        '''
        result = self._values.get("failure_threshold")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def grpc(self) -> typing.Optional["InferenceRuntimeSpecHealthStartupGrpc"]:
        '''
        :schema: InferenceRuntimeSpecHealthStartup#grpc
        '''
        result = self._values.get("grpc")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthStartupGrpc"], result)

    @builtins.property
    def http_get(self) -> typing.Optional["InferenceRuntimeSpecHealthStartupHttpGet"]:
        '''
        :schema: InferenceRuntimeSpecHealthStartup#httpGet
        '''
        result = self._values.get("http_get")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthStartupHttpGet"], result)

    @builtins.property
    def initial_delay_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthStartup#initialDelaySeconds
        '''
        result = self._values.get("initial_delay_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def period_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthStartup#periodSeconds
        '''
        result = self._values.get("period_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def success_threshold(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthStartup#successThreshold
        '''
        result = self._values.get("success_threshold")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def tcp_socket(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecHealthStartupTcpSocket"]:
        '''
        :schema: InferenceRuntimeSpecHealthStartup#tcpSocket
        '''
        result = self._values.get("tcp_socket")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthStartupTcpSocket"], result)

    @builtins.property
    def termination_grace_period_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthStartup#terminationGracePeriodSeconds
        '''
        result = self._values.get("termination_grace_period_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def timeout_seconds(self) -> typing.Optional[jsii.Number]:
        '''
        :schema: InferenceRuntimeSpecHealthStartup#timeoutSeconds
        '''
        result = self._values.get("timeout_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthStartup(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthStartupExec",
    jsii_struct_bases=[],
    name_mapping={"command": "command"},
)
class InferenceRuntimeSpecHealthStartupExec:
    def __init__(self, *, command: typing.Sequence[builtins.str]) -> None:
        '''
        :param command: 

        :schema: InferenceRuntimeSpecHealthStartupExec
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__156ad9d01a9cd9002ad042273044e25b0f0c5971c77313f39a28a118991bcf97)
            check_type(argname="argument command", value=command, expected_type=type_hints["command"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "command": command,
        }

    @builtins.property
    def command(self) -> typing.List[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthStartupExec#command
        '''
        result = self._values.get("command")
        assert result is not None, "Required property 'command' is missing"
        return typing.cast(typing.List[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthStartupExec(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthStartupGrpc",
    jsii_struct_bases=[],
    name_mapping={"port": "port", "service": "service"},
)
class InferenceRuntimeSpecHealthStartupGrpc:
    def __init__(
        self,
        *,
        port: jsii.Number,
        service: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param port: 
        :param service: 

        :schema: InferenceRuntimeSpecHealthStartupGrpc
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__4270c0e5d66bbd160b7e131c1bdc42d61092302668fe3d834cf4a784122912f4)
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument service", value=service, expected_type=type_hints["service"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "port": port,
        }
        if service is not None:
            self._values["service"] = service

    @builtins.property
    def port(self) -> jsii.Number:
        '''
        :schema: InferenceRuntimeSpecHealthStartupGrpc#port
        '''
        result = self._values.get("port")
        assert result is not None, "Required property 'port' is missing"
        return typing.cast(jsii.Number, result)

    @builtins.property
    def service(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthStartupGrpc#service
        '''
        result = self._values.get("service")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthStartupGrpc(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthStartupHttpGet",
    jsii_struct_bases=[],
    name_mapping={
        "port": "port",
        "host": "host",
        "http_headers": "httpHeaders",
        "path": "path",
        "scheme": "scheme",
    },
)
class InferenceRuntimeSpecHealthStartupHttpGet:
    def __init__(
        self,
        *,
        port: "InferenceRuntimeSpecHealthStartupHttpGetPort",
        host: typing.Optional[builtins.str] = None,
        http_headers: typing.Optional[typing.Sequence[typing.Union["InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders", typing.Dict[builtins.str, typing.Any]]]] = None,
        path: typing.Optional[builtins.str] = None,
        scheme: typing.Optional["InferenceRuntimeSpecHealthStartupHttpGetScheme"] = None,
    ) -> None:
        '''
        :param port: 
        :param host: 
        :param http_headers: 
        :param path: 
        :param scheme: 

        :schema: InferenceRuntimeSpecHealthStartupHttpGet
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__b37e8b337f2d34fe6a2695edbfc3c52e67e95eb2a371943f1ebf81ace74004eb)
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument host", value=host, expected_type=type_hints["host"])
            check_type(argname="argument http_headers", value=http_headers, expected_type=type_hints["http_headers"])
            check_type(argname="argument path", value=path, expected_type=type_hints["path"])
            check_type(argname="argument scheme", value=scheme, expected_type=type_hints["scheme"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "port": port,
        }
        if host is not None:
            self._values["host"] = host
        if http_headers is not None:
            self._values["http_headers"] = http_headers
        if path is not None:
            self._values["path"] = path
        if scheme is not None:
            self._values["scheme"] = scheme

    @builtins.property
    def port(self) -> "InferenceRuntimeSpecHealthStartupHttpGetPort":
        '''
        :schema: InferenceRuntimeSpecHealthStartupHttpGet#port
        '''
        result = self._values.get("port")
        assert result is not None, "Required property 'port' is missing"
        return typing.cast("InferenceRuntimeSpecHealthStartupHttpGetPort", result)

    @builtins.property
    def host(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthStartupHttpGet#host
        '''
        result = self._values.get("host")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def http_headers(
        self,
    ) -> typing.Optional[typing.List["InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders"]]:
        '''
        :schema: InferenceRuntimeSpecHealthStartupHttpGet#httpHeaders
        '''
        result = self._values.get("http_headers")
        return typing.cast(typing.Optional[typing.List["InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders"]], result)

    @builtins.property
    def path(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthStartupHttpGet#path
        '''
        result = self._values.get("path")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def scheme(
        self,
    ) -> typing.Optional["InferenceRuntimeSpecHealthStartupHttpGetScheme"]:
        '''
        :schema: InferenceRuntimeSpecHealthStartupHttpGet#scheme
        '''
        result = self._values.get("scheme")
        return typing.cast(typing.Optional["InferenceRuntimeSpecHealthStartupHttpGetScheme"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthStartupHttpGet(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders",
    jsii_struct_bases=[],
    name_mapping={"name": "name", "value": "value"},
)
class InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders:
    def __init__(self, *, name: builtins.str, value: builtins.str) -> None:
        '''
        :param name: 
        :param value: 

        :schema: InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__43369221f7add4aa310cee3c539e29b669e4e22268ac99da957dec69bb5c67f1)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
            "value": value,
        }

    @builtins.property
    def name(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def value(self) -> builtins.str:
        '''
        :schema: InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders#value
        '''
        result = self._values.get("value")
        assert result is not None, "Required property 'value' is missing"
        return typing.cast(builtins.str, result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class InferenceRuntimeSpecHealthStartupHttpGetPort(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthStartupHttpGetPort",
):
    '''
    :schema: InferenceRuntimeSpecHealthStartupHttpGetPort
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "InferenceRuntimeSpecHealthStartupHttpGetPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__fb447738480118fd14d1c97dbad91e09767b5ccaa6eaacb96a4e97a5c3de86fa)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthStartupHttpGetPort", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "InferenceRuntimeSpecHealthStartupHttpGetPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__00af674dc3780db2ca886e7b67662325c670e2cfaed0fd2eb5bba99f4086969f)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthStartupHttpGetPort", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.enum(jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthStartupHttpGetScheme")
class InferenceRuntimeSpecHealthStartupHttpGetScheme(enum.Enum):
    '''
    :schema: InferenceRuntimeSpecHealthStartupHttpGetScheme
    '''

    HTTP = "HTTP"
    '''HTTP.'''
    HTTPS = "HTTPS"
    '''HTTPS.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthStartupTcpSocket",
    jsii_struct_bases=[],
    name_mapping={"port": "port", "host": "host"},
)
class InferenceRuntimeSpecHealthStartupTcpSocket:
    def __init__(
        self,
        *,
        port: "InferenceRuntimeSpecHealthStartupTcpSocketPort",
        host: typing.Optional[builtins.str] = None,
    ) -> None:
        '''
        :param port: 
        :param host: 

        :schema: InferenceRuntimeSpecHealthStartupTcpSocket
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__c64bfe5c700cdaf8bf035ddf665a8cc27a08a46e7a960043f322e4d6b3c9291c)
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument host", value=host, expected_type=type_hints["host"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "port": port,
        }
        if host is not None:
            self._values["host"] = host

    @builtins.property
    def port(self) -> "InferenceRuntimeSpecHealthStartupTcpSocketPort":
        '''
        :schema: InferenceRuntimeSpecHealthStartupTcpSocket#port
        '''
        result = self._values.get("port")
        assert result is not None, "Required property 'port' is missing"
        return typing.cast("InferenceRuntimeSpecHealthStartupTcpSocketPort", result)

    @builtins.property
    def host(self) -> typing.Optional[builtins.str]:
        '''
        :schema: InferenceRuntimeSpecHealthStartupTcpSocket#host
        '''
        result = self._values.get("host")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecHealthStartupTcpSocket(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class InferenceRuntimeSpecHealthStartupTcpSocketPort(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.InferenceRuntimeSpecHealthStartupTcpSocketPort",
):
    '''
    :schema: InferenceRuntimeSpecHealthStartupTcpSocketPort
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "InferenceRuntimeSpecHealthStartupTcpSocketPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__0c5b0c7c1fc6b7b5cde1bc038b72fe37d66935f8b2b2e923326fbe334f192e90)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthStartupTcpSocketPort", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "InferenceRuntimeSpecHealthStartupTcpSocketPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__55c283ce1ad08df778990a44dfbda129aa2218976a25ffd2346d3e103938e175)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecHealthStartupTcpSocketPort", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecLifecycle",
    jsii_struct_bases=[],
    name_mapping={
        "pre_stop_drain": "preStopDrain",
        "termination_grace_period_seconds": "terminationGracePeriodSeconds",
    },
)
class InferenceRuntimeSpecLifecycle:
    def __init__(
        self,
        *,
        pre_stop_drain: typing.Optional[builtins.bool] = None,
        termination_grace_period_seconds: typing.Optional[jsii.Number] = None,
    ) -> None:
        '''Shutdown behaviour.

        :param pre_stop_drain: preStop sleeps scaling.drainTimeout (needs /bin/sh); the grace period is widened to at least drainTimeout + 10s.
        :param termination_grace_period_seconds: Base shutdown budget of the backend Pod.

        :schema: InferenceRuntimeSpecLifecycle
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__0c7f8f5512be40f5184bb5a27af9d27f28e693eb6d3c0e18ca43068fbaff2c35)
            check_type(argname="argument pre_stop_drain", value=pre_stop_drain, expected_type=type_hints["pre_stop_drain"])
            check_type(argname="argument termination_grace_period_seconds", value=termination_grace_period_seconds, expected_type=type_hints["termination_grace_period_seconds"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if pre_stop_drain is not None:
            self._values["pre_stop_drain"] = pre_stop_drain
        if termination_grace_period_seconds is not None:
            self._values["termination_grace_period_seconds"] = termination_grace_period_seconds

    @builtins.property
    def pre_stop_drain(self) -> typing.Optional[builtins.bool]:
        '''preStop sleeps scaling.drainTimeout (needs /bin/sh); the grace period is widened to at least drainTimeout + 10s.

        :schema: InferenceRuntimeSpecLifecycle#preStopDrain
        '''
        result = self._values.get("pre_stop_drain")
        return typing.cast(typing.Optional[builtins.bool], result)

    @builtins.property
    def termination_grace_period_seconds(self) -> typing.Optional[jsii.Number]:
        '''Base shutdown budget of the backend Pod.

        :schema: InferenceRuntimeSpecLifecycle#terminationGracePeriodSeconds
        '''
        result = self._values.get("termination_grace_period_seconds")
        return typing.cast(typing.Optional[jsii.Number], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecLifecycle(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.InferenceRuntimeSpecMetrics",
    jsii_struct_bases=[],
    name_mapping={
        "queue_depth": "queueDepth",
        "kv_cache_util": "kvCacheUtil",
        "path": "path",
        "port": "port",
        "running": "running",
        "ttft": "ttft",
    },
)
class InferenceRuntimeSpecMetrics:
    def __init__(
        self,
        *,
        queue_depth: builtins.str,
        kv_cache_util: typing.Optional[builtins.str] = None,
        path: typing.Optional[builtins.str] = None,
        port: typing.Optional["InferenceRuntimeSpecMetricsPort"] = None,
        running: typing.Optional[builtins.str] = None,
        ttft: typing.Optional[builtins.str] = None,
    ) -> None:
        '''Scrape metadata of the engine.

        :param queue_depth: Engine metric of waiting requests, e.g. vllm:num_requests_waiting.
        :param kv_cache_util: Engine metric of KV-cache utilization.
        :param path: Metrics path of the engine.
        :param port: Metrics port, by name or number.
        :param running: Engine metric of running requests.
        :param ttft: Engine metric of time to first token.

        :schema: InferenceRuntimeSpecMetrics
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__e6d8db49910abb880c12388b4e0b280e7d13bb0e214ea316a6ceca32296da184)
            check_type(argname="argument queue_depth", value=queue_depth, expected_type=type_hints["queue_depth"])
            check_type(argname="argument kv_cache_util", value=kv_cache_util, expected_type=type_hints["kv_cache_util"])
            check_type(argname="argument path", value=path, expected_type=type_hints["path"])
            check_type(argname="argument port", value=port, expected_type=type_hints["port"])
            check_type(argname="argument running", value=running, expected_type=type_hints["running"])
            check_type(argname="argument ttft", value=ttft, expected_type=type_hints["ttft"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "queue_depth": queue_depth,
        }
        if kv_cache_util is not None:
            self._values["kv_cache_util"] = kv_cache_util
        if path is not None:
            self._values["path"] = path
        if port is not None:
            self._values["port"] = port
        if running is not None:
            self._values["running"] = running
        if ttft is not None:
            self._values["ttft"] = ttft

    @builtins.property
    def queue_depth(self) -> builtins.str:
        '''Engine metric of waiting requests, e.g. vllm:num_requests_waiting.

        :schema: InferenceRuntimeSpecMetrics#queueDepth
        '''
        result = self._values.get("queue_depth")
        assert result is not None, "Required property 'queue_depth' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def kv_cache_util(self) -> typing.Optional[builtins.str]:
        '''Engine metric of KV-cache utilization.

        :schema: InferenceRuntimeSpecMetrics#kvCacheUtil
        '''
        result = self._values.get("kv_cache_util")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def path(self) -> typing.Optional[builtins.str]:
        '''Metrics path of the engine.

        :schema: InferenceRuntimeSpecMetrics#path
        '''
        result = self._values.get("path")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def port(self) -> typing.Optional["InferenceRuntimeSpecMetricsPort"]:
        '''Metrics port, by name or number.

        :schema: InferenceRuntimeSpecMetrics#port
        '''
        result = self._values.get("port")
        return typing.cast(typing.Optional["InferenceRuntimeSpecMetricsPort"], result)

    @builtins.property
    def running(self) -> typing.Optional[builtins.str]:
        '''Engine metric of running requests.

        :schema: InferenceRuntimeSpecMetrics#running
        '''
        result = self._values.get("running")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def ttft(self) -> typing.Optional[builtins.str]:
        '''Engine metric of time to first token.

        :schema: InferenceRuntimeSpecMetrics#ttft
        '''
        result = self._values.get("ttft")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "InferenceRuntimeSpecMetrics(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class InferenceRuntimeSpecMetricsPort(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.InferenceRuntimeSpecMetricsPort",
):
    '''Metrics port, by name or number.

    :schema: InferenceRuntimeSpecMetricsPort
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(cls, value: jsii.Number) -> "InferenceRuntimeSpecMetricsPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__83bdcc6218d4d783e416132e5bed55e23887cd2ee134aa0bfeeef12dfc9265f1)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecMetricsPort", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(cls, value: builtins.str) -> "InferenceRuntimeSpecMetricsPort":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__8cdaea4496afc1bfe9261b4d44d302ada0781b2a6e4fbcfaa2fe42a5ebfd2c67)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("InferenceRuntimeSpecMetricsPort", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.enum(jsii_type="ionoctayaserving.InferenceRuntimeSpecVendor")
class InferenceRuntimeSpecVendor(enum.Enum):
    '''Accelerator vendor;

    selects the accelerator adapter.

    :schema: InferenceRuntimeSpecVendor
    '''

    NVIDIA = "NVIDIA"
    '''nvidia.'''
    ASCEND = "ASCEND"
    '''ascend.'''
    AMD = "AMD"
    '''amd.'''
    INTEL_HYPHEN_GAUDI = "INTEL_HYPHEN_GAUDI"
    '''intel-gaudi.'''
    CPU = "CPU"
    '''cpu.'''


class LlmService(
    _cdk8s_d3d9af27.ApiObject,
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.LlmService",
):
    '''LLMService declares a model, how to select its runtime, and how it scales and is served.

    :schema: LLMService
    '''

    def __init__(
        self,
        scope: "_constructs_77d1e7e8.Construct",
        id: builtins.str,
        *,
        spec: typing.Union["LlmServiceSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''Defines a "LLMService" API object.

        :param scope: the scope in which to define this object.
        :param id: a scope-local name for the object.
        :param spec: 
        :param metadata: 
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__a30c2db1cbbcda0e0c0a8d62efb26e36c0393d11ee3d418a8c96a95bc4e7cc57)
            check_type(argname="argument scope", value=scope, expected_type=type_hints["scope"])
            check_type(argname="argument id", value=id, expected_type=type_hints["id"])
        props = LlmServiceProps(spec=spec, metadata=metadata)

        jsii.create(self.__class__, self, [scope, id, props])

    @jsii.member(jsii_name="manifest")
    @builtins.classmethod
    def manifest(
        cls,
        *,
        spec: typing.Union["LlmServiceSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> typing.Any:
        '''Renders a Kubernetes manifest for "LLMService".

        This can be used to inline resource manifests inside other objects (e.g. as templates).

        :param spec: 
        :param metadata: 
        '''
        props = LlmServiceProps(spec=spec, metadata=metadata)

        return typing.cast(typing.Any, jsii.sinvoke(cls, "manifest", [props]))

    @jsii.member(jsii_name="toJson")
    def to_json(self) -> typing.Any:
        '''Renders the object to Kubernetes JSON.'''
        return typing.cast(typing.Any, jsii.invoke(self, "toJson", []))

    @jsii.python.classproperty
    @jsii.member(jsii_name="GVK")
    def GVK(cls) -> "_cdk8s_d3d9af27.GroupVersionKind":
        '''Returns the apiVersion and kind for "LLMService".'''
        return typing.cast("_cdk8s_d3d9af27.GroupVersionKind", jsii.sget(cls, "GVK"))


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceProps",
    jsii_struct_bases=[],
    name_mapping={"spec": "spec", "metadata": "metadata"},
)
class LlmServiceProps:
    def __init__(
        self,
        *,
        spec: typing.Union["LlmServiceSpec", typing.Dict[builtins.str, typing.Any]],
        metadata: typing.Optional[typing.Union["_cdk8s_d3d9af27.ApiObjectMetadata", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''LLMService declares a model, how to select its runtime, and how it scales and is served.

        :param spec: 
        :param metadata: 

        :schema: LLMService
        '''
        if isinstance(spec, dict):
            spec = LlmServiceSpec(**spec)
        if isinstance(metadata, dict):
            metadata = _cdk8s_d3d9af27.ApiObjectMetadata(**metadata)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__f96388ec956758fad4926c415b21c8816d294aaf8d1d02b7922012ea5e666e7a)
            check_type(argname="argument spec", value=spec, expected_type=type_hints["spec"])
            check_type(argname="argument metadata", value=metadata, expected_type=type_hints["metadata"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "spec": spec,
        }
        if metadata is not None:
            self._values["metadata"] = metadata

    @builtins.property
    def spec(self) -> "LlmServiceSpec":
        '''
        :schema: LLMService#spec
        '''
        result = self._values.get("spec")
        assert result is not None, "Required property 'spec' is missing"
        return typing.cast("LlmServiceSpec", result)

    @builtins.property
    def metadata(self) -> typing.Optional["_cdk8s_d3d9af27.ApiObjectMetadata"]:
        '''
        :schema: LLMService#metadata
        '''
        result = self._values.get("metadata")
        return typing.cast(typing.Optional["_cdk8s_d3d9af27.ApiObjectMetadata"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceProps(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpec",
    jsii_struct_bases=[],
    name_mapping={
        "model": "model",
        "runtime": "runtime",
        "cache": "cache",
        "endpoint": "endpoint",
        "image_pull_secrets": "imagePullSecrets",
        "resources": "resources",
        "scaling": "scaling",
    },
)
class LlmServiceSpec:
    def __init__(
        self,
        *,
        model: typing.Union["LlmServiceSpecModel", typing.Dict[builtins.str, typing.Any]],
        runtime: typing.Union["LlmServiceSpecRuntime", typing.Dict[builtins.str, typing.Any]],
        cache: typing.Optional[typing.Union["LlmServiceSpecCache", typing.Dict[builtins.str, typing.Any]]] = None,
        endpoint: typing.Optional[typing.Union["LlmServiceSpecEndpoint", typing.Dict[builtins.str, typing.Any]]] = None,
        image_pull_secrets: typing.Optional[typing.Sequence[typing.Union["LlmServiceSpecImagePullSecrets", typing.Dict[builtins.str, typing.Any]]]] = None,
        resources: typing.Optional[typing.Union["LlmServiceSpecResources", typing.Dict[builtins.str, typing.Any]]] = None,
        scaling: typing.Optional[typing.Union["LlmServiceSpecScaling", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''
        :param model: The model weights.
        :param runtime: Which InferenceRuntime serves the model.
        :param cache: Model cache and prewarming.
        :param endpoint: The always-on gateway in front of the backend.
        :param image_pull_secrets: Applied to backend, gateway and prewarm Pods.
        :param resources: Backend resources.
        :param scaling: Backend replica bounds and timing (KEDA owns the replicas).

        :schema: LlmServiceSpec
        '''
        if isinstance(model, dict):
            model = LlmServiceSpecModel(**model)
        if isinstance(runtime, dict):
            runtime = LlmServiceSpecRuntime(**runtime)
        if isinstance(cache, dict):
            cache = LlmServiceSpecCache(**cache)
        if isinstance(endpoint, dict):
            endpoint = LlmServiceSpecEndpoint(**endpoint)
        if isinstance(resources, dict):
            resources = LlmServiceSpecResources(**resources)
        if isinstance(scaling, dict):
            scaling = LlmServiceSpecScaling(**scaling)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__276fd87c323d358e5892d68008bd9bf9108fcc09691fccac48b50814938d6698)
            check_type(argname="argument model", value=model, expected_type=type_hints["model"])
            check_type(argname="argument runtime", value=runtime, expected_type=type_hints["runtime"])
            check_type(argname="argument cache", value=cache, expected_type=type_hints["cache"])
            check_type(argname="argument endpoint", value=endpoint, expected_type=type_hints["endpoint"])
            check_type(argname="argument image_pull_secrets", value=image_pull_secrets, expected_type=type_hints["image_pull_secrets"])
            check_type(argname="argument resources", value=resources, expected_type=type_hints["resources"])
            check_type(argname="argument scaling", value=scaling, expected_type=type_hints["scaling"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "model": model,
            "runtime": runtime,
        }
        if cache is not None:
            self._values["cache"] = cache
        if endpoint is not None:
            self._values["endpoint"] = endpoint
        if image_pull_secrets is not None:
            self._values["image_pull_secrets"] = image_pull_secrets
        if resources is not None:
            self._values["resources"] = resources
        if scaling is not None:
            self._values["scaling"] = scaling

    @builtins.property
    def model(self) -> "LlmServiceSpecModel":
        '''The model weights.

        :schema: LlmServiceSpec#model
        '''
        result = self._values.get("model")
        assert result is not None, "Required property 'model' is missing"
        return typing.cast("LlmServiceSpecModel", result)

    @builtins.property
    def runtime(self) -> "LlmServiceSpecRuntime":
        '''Which InferenceRuntime serves the model.

        :schema: LlmServiceSpec#runtime
        '''
        result = self._values.get("runtime")
        assert result is not None, "Required property 'runtime' is missing"
        return typing.cast("LlmServiceSpecRuntime", result)

    @builtins.property
    def cache(self) -> typing.Optional["LlmServiceSpecCache"]:
        '''Model cache and prewarming.

        :schema: LlmServiceSpec#cache
        '''
        result = self._values.get("cache")
        return typing.cast(typing.Optional["LlmServiceSpecCache"], result)

    @builtins.property
    def endpoint(self) -> typing.Optional["LlmServiceSpecEndpoint"]:
        '''The always-on gateway in front of the backend.

        :schema: LlmServiceSpec#endpoint
        '''
        result = self._values.get("endpoint")
        return typing.cast(typing.Optional["LlmServiceSpecEndpoint"], result)

    @builtins.property
    def image_pull_secrets(
        self,
    ) -> typing.Optional[typing.List["LlmServiceSpecImagePullSecrets"]]:
        '''Applied to backend, gateway and prewarm Pods.

        :schema: LlmServiceSpec#imagePullSecrets
        '''
        result = self._values.get("image_pull_secrets")
        return typing.cast(typing.Optional[typing.List["LlmServiceSpecImagePullSecrets"]], result)

    @builtins.property
    def resources(self) -> typing.Optional["LlmServiceSpecResources"]:
        '''Backend resources.

        :schema: LlmServiceSpec#resources
        '''
        result = self._values.get("resources")
        return typing.cast(typing.Optional["LlmServiceSpecResources"], result)

    @builtins.property
    def scaling(self) -> typing.Optional["LlmServiceSpecScaling"]:
        '''Backend replica bounds and timing (KEDA owns the replicas).

        :schema: LlmServiceSpec#scaling
        '''
        result = self._values.get("scaling")
        return typing.cast(typing.Optional["LlmServiceSpecScaling"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpec(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecCache",
    jsii_struct_bases=[],
    name_mapping={
        "prewarm": "prewarm",
        "size": "size",
        "storage_class_name": "storageClassName",
        "strategy": "strategy",
    },
)
class LlmServiceSpecCache:
    def __init__(
        self,
        *,
        prewarm: typing.Optional[builtins.bool] = None,
        size: typing.Optional["LlmServiceSpecCacheSize"] = None,
        storage_class_name: typing.Optional[builtins.str] = None,
        strategy: typing.Optional["LlmServiceSpecCacheStrategy"] = None,
    ) -> None:
        '''Model cache and prewarming.

        :param prewarm: Download hub weights with a Job before serving; oci:// sources always stage through a Job.
        :param size: Cache volume size; 50Gi when unset.
        :param storage_class_name: StorageClass of the cache volume; the cluster default when unset.
        :param strategy: Where weights are cached: NodeLocalPVC, SharedPVC (needs a RWX class), HostPath or None; BakedImage is reserved.

        :schema: LlmServiceSpecCache
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__6f78902b5f52e4bef47d96cc159d18480f65a6508ab4fcf4b5e166a876f7c12e)
            check_type(argname="argument prewarm", value=prewarm, expected_type=type_hints["prewarm"])
            check_type(argname="argument size", value=size, expected_type=type_hints["size"])
            check_type(argname="argument storage_class_name", value=storage_class_name, expected_type=type_hints["storage_class_name"])
            check_type(argname="argument strategy", value=strategy, expected_type=type_hints["strategy"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if prewarm is not None:
            self._values["prewarm"] = prewarm
        if size is not None:
            self._values["size"] = size
        if storage_class_name is not None:
            self._values["storage_class_name"] = storage_class_name
        if strategy is not None:
            self._values["strategy"] = strategy

    @builtins.property
    def prewarm(self) -> typing.Optional[builtins.bool]:
        '''Download hub weights with a Job before serving;

        oci:// sources always stage through a Job.

        :schema: LlmServiceSpecCache#prewarm
        '''
        result = self._values.get("prewarm")
        return typing.cast(typing.Optional[builtins.bool], result)

    @builtins.property
    def size(self) -> typing.Optional["LlmServiceSpecCacheSize"]:
        '''Cache volume size;

        50Gi when unset.

        :schema: LlmServiceSpecCache#size
        '''
        result = self._values.get("size")
        return typing.cast(typing.Optional["LlmServiceSpecCacheSize"], result)

    @builtins.property
    def storage_class_name(self) -> typing.Optional[builtins.str]:
        '''StorageClass of the cache volume;

        the cluster default when unset.

        :schema: LlmServiceSpecCache#storageClassName
        '''
        result = self._values.get("storage_class_name")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def strategy(self) -> typing.Optional["LlmServiceSpecCacheStrategy"]:
        '''Where weights are cached: NodeLocalPVC, SharedPVC (needs a RWX class), HostPath or None;

        BakedImage is reserved.

        :schema: LlmServiceSpecCache#strategy
        '''
        result = self._values.get("strategy")
        return typing.cast(typing.Optional["LlmServiceSpecCacheStrategy"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecCache(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class LlmServiceSpecCacheSize(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.LlmServiceSpecCacheSize",
):
    '''Cache volume size;

    50Gi when unset.

    :schema: LlmServiceSpecCacheSize
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(cls, value: jsii.Number) -> "LlmServiceSpecCacheSize":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__b717cfdb842405842990b0ea7cf20c7c7a9c442755da6817f349e04a7fbbe379)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecCacheSize", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(cls, value: builtins.str) -> "LlmServiceSpecCacheSize":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__8cb001c9ae3a5c7fdd0693eb220dfcd455df2aed924051847ca1fc93c67d02ce)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecCacheSize", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.enum(jsii_type="ionoctayaserving.LlmServiceSpecCacheStrategy")
class LlmServiceSpecCacheStrategy(enum.Enum):
    '''Where weights are cached: NodeLocalPVC, SharedPVC (needs a RWX class), HostPath or None;

    BakedImage is reserved.

    :schema: LlmServiceSpecCacheStrategy
    '''

    NODE_LOCAL_PVC = "NODE_LOCAL_PVC"
    '''NodeLocalPVC.'''
    SHARED_PVC = "SHARED_PVC"
    '''SharedPVC.'''
    HOST_PATH = "HOST_PATH"
    '''HostPath.'''
    BAKED_IMAGE = "BAKED_IMAGE"
    '''BakedImage.'''
    NONE = "NONE"
    '''None.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecEndpoint",
    jsii_struct_bases=[],
    name_mapping={
        "authentication": "authentication",
        "cold_routes": "coldRoutes",
        "cold_start": "coldStart",
        "forward_authorization": "forwardAuthorization",
        "max_connections": "maxConnections",
        "max_queue": "maxQueue",
        "max_queued_body_bytes": "maxQueuedBodyBytes",
        "open_ai_compatible": "openAiCompatible",
        "replicas": "replicas",
        "resources": "resources",
        "served_model_name": "servedModelName",
        "websocket_max_message_bytes": "websocketMaxMessageBytes",
        "websocket_max_open": "websocketMaxOpen",
    },
)
class LlmServiceSpecEndpoint:
    def __init__(
        self,
        *,
        authentication: typing.Optional[typing.Union["LlmServiceSpecEndpointAuthentication", typing.Dict[builtins.str, typing.Any]]] = None,
        cold_routes: typing.Optional[typing.Sequence[typing.Union["LlmServiceSpecEndpointColdRoutes", typing.Dict[builtins.str, typing.Any]]]] = None,
        cold_start: typing.Optional[typing.Union["LlmServiceSpecEndpointColdStart", typing.Dict[builtins.str, typing.Any]]] = None,
        forward_authorization: typing.Optional[builtins.bool] = None,
        max_connections: typing.Optional[jsii.Number] = None,
        max_queue: typing.Optional[jsii.Number] = None,
        max_queued_body_bytes: typing.Optional[jsii.Number] = None,
        open_ai_compatible: typing.Optional[builtins.bool] = None,
        replicas: typing.Optional[jsii.Number] = None,
        resources: typing.Optional[typing.Union["LlmServiceSpecEndpointResources", typing.Dict[builtins.str, typing.Any]]] = None,
        served_model_name: typing.Optional[builtins.str] = None,
        websocket_max_message_bytes: typing.Optional[jsii.Number] = None,
        websocket_max_open: typing.Optional[jsii.Number] = None,
    ) -> None:
        '''The always-on gateway in front of the backend.

        :param authentication: Require a Bearer API key on proxied routes.
        :param cold_routes: Extension: routes answered while the backend is cold, without waking it (default: ``GET /v1/models`` answers the served model). Any other path, unknown ``/v1/*`` ones too, wakes it.
        :param cold_start: Behaviour while the backend is cold.
        :param forward_authorization: Extension: pass the client's ``Authorization`` header to the engine (for engines started with their own ``--api-key``); stripped by default.
        :param max_connections: Extension: client connections one gateway keeps open at once; when unset, the operator's setting (1024), lowered to fit a smaller ``resources.limits.memory``.
        :param max_queue: Cold admission slots per gateway replica; a full queue answers 429.
        :param max_queued_body_bytes: Extension: bytes of request bodies all queued cold requests of one gateway hold together; when unset, the operator's setting (128 MiB), lowered to fit a smaller ``resources.limits.memory``.
        :param open_ai_compatible: Informational: the backend speaks the OpenAI API.
        :param replicas: Extension: gateway replicas; the operator-wide default (1) when unset.
        :param resources: Gateway container resources.
        :param served_model_name: Extension: the model id a cold ``models`` route answers; the LLMService's name when unset (the example runtimes serve the model under that name).
        :param websocket_max_message_bytes: Extension: the largest WebSocket message either way, in bytes; when unset, the operator's setting (4 MiB).
        :param websocket_max_open: Extension: WebSockets one gateway keeps open at once; when unset, the operator's setting (16), lowered to fit a smaller ``resources.limits.memory``.

        :schema: LlmServiceSpecEndpoint
        '''
        if isinstance(authentication, dict):
            authentication = LlmServiceSpecEndpointAuthentication(**authentication)
        if isinstance(cold_start, dict):
            cold_start = LlmServiceSpecEndpointColdStart(**cold_start)
        if isinstance(resources, dict):
            resources = LlmServiceSpecEndpointResources(**resources)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__bb942df7183590492b6e60f40b1b1d4a737f460ee171c53dd4fb23b1412dff78)
            check_type(argname="argument authentication", value=authentication, expected_type=type_hints["authentication"])
            check_type(argname="argument cold_routes", value=cold_routes, expected_type=type_hints["cold_routes"])
            check_type(argname="argument cold_start", value=cold_start, expected_type=type_hints["cold_start"])
            check_type(argname="argument forward_authorization", value=forward_authorization, expected_type=type_hints["forward_authorization"])
            check_type(argname="argument max_connections", value=max_connections, expected_type=type_hints["max_connections"])
            check_type(argname="argument max_queue", value=max_queue, expected_type=type_hints["max_queue"])
            check_type(argname="argument max_queued_body_bytes", value=max_queued_body_bytes, expected_type=type_hints["max_queued_body_bytes"])
            check_type(argname="argument open_ai_compatible", value=open_ai_compatible, expected_type=type_hints["open_ai_compatible"])
            check_type(argname="argument replicas", value=replicas, expected_type=type_hints["replicas"])
            check_type(argname="argument resources", value=resources, expected_type=type_hints["resources"])
            check_type(argname="argument served_model_name", value=served_model_name, expected_type=type_hints["served_model_name"])
            check_type(argname="argument websocket_max_message_bytes", value=websocket_max_message_bytes, expected_type=type_hints["websocket_max_message_bytes"])
            check_type(argname="argument websocket_max_open", value=websocket_max_open, expected_type=type_hints["websocket_max_open"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if authentication is not None:
            self._values["authentication"] = authentication
        if cold_routes is not None:
            self._values["cold_routes"] = cold_routes
        if cold_start is not None:
            self._values["cold_start"] = cold_start
        if forward_authorization is not None:
            self._values["forward_authorization"] = forward_authorization
        if max_connections is not None:
            self._values["max_connections"] = max_connections
        if max_queue is not None:
            self._values["max_queue"] = max_queue
        if max_queued_body_bytes is not None:
            self._values["max_queued_body_bytes"] = max_queued_body_bytes
        if open_ai_compatible is not None:
            self._values["open_ai_compatible"] = open_ai_compatible
        if replicas is not None:
            self._values["replicas"] = replicas
        if resources is not None:
            self._values["resources"] = resources
        if served_model_name is not None:
            self._values["served_model_name"] = served_model_name
        if websocket_max_message_bytes is not None:
            self._values["websocket_max_message_bytes"] = websocket_max_message_bytes
        if websocket_max_open is not None:
            self._values["websocket_max_open"] = websocket_max_open

    @builtins.property
    def authentication(self) -> typing.Optional["LlmServiceSpecEndpointAuthentication"]:
        '''Require a Bearer API key on proxied routes.

        :schema: LlmServiceSpecEndpoint#authentication
        '''
        result = self._values.get("authentication")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointAuthentication"], result)

    @builtins.property
    def cold_routes(
        self,
    ) -> typing.Optional[typing.List["LlmServiceSpecEndpointColdRoutes"]]:
        '''Extension: routes answered while the backend is cold, without waking it (default: ``GET /v1/models`` answers the served model).

        Any other path, unknown ``/v1/*`` ones too, wakes it.

        :schema: LlmServiceSpecEndpoint#coldRoutes
        '''
        result = self._values.get("cold_routes")
        return typing.cast(typing.Optional[typing.List["LlmServiceSpecEndpointColdRoutes"]], result)

    @builtins.property
    def cold_start(self) -> typing.Optional["LlmServiceSpecEndpointColdStart"]:
        '''Behaviour while the backend is cold.

        :schema: LlmServiceSpecEndpoint#coldStart
        '''
        result = self._values.get("cold_start")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointColdStart"], result)

    @builtins.property
    def forward_authorization(self) -> typing.Optional[builtins.bool]:
        '''Extension: pass the client's ``Authorization`` header to the engine (for engines started with their own ``--api-key``);

        stripped by default.

        :schema: LlmServiceSpecEndpoint#forwardAuthorization
        '''
        result = self._values.get("forward_authorization")
        return typing.cast(typing.Optional[builtins.bool], result)

    @builtins.property
    def max_connections(self) -> typing.Optional[jsii.Number]:
        '''Extension: client connections one gateway keeps open at once;

        when unset, the operator's setting (1024), lowered to fit a smaller ``resources.limits.memory``.

        :schema: LlmServiceSpecEndpoint#maxConnections
        '''
        result = self._values.get("max_connections")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def max_queue(self) -> typing.Optional[jsii.Number]:
        '''Cold admission slots per gateway replica;

        a full queue answers 429.

        :schema: LlmServiceSpecEndpoint#maxQueue
        '''
        result = self._values.get("max_queue")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def max_queued_body_bytes(self) -> typing.Optional[jsii.Number]:
        '''Extension: bytes of request bodies all queued cold requests of one gateway hold together;

        when unset, the operator's setting (128 MiB), lowered to fit a smaller ``resources.limits.memory``.

        :schema: LlmServiceSpecEndpoint#maxQueuedBodyBytes
        '''
        result = self._values.get("max_queued_body_bytes")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def open_ai_compatible(self) -> typing.Optional[builtins.bool]:
        '''Informational: the backend speaks the OpenAI API.

        :schema: LlmServiceSpecEndpoint#openAICompatible
        '''
        result = self._values.get("open_ai_compatible")
        return typing.cast(typing.Optional[builtins.bool], result)

    @builtins.property
    def replicas(self) -> typing.Optional[jsii.Number]:
        '''Extension: gateway replicas;

        the operator-wide default (1) when unset.

        :schema: LlmServiceSpecEndpoint#replicas
        '''
        result = self._values.get("replicas")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def resources(self) -> typing.Optional["LlmServiceSpecEndpointResources"]:
        '''Gateway container resources.

        :schema: LlmServiceSpecEndpoint#resources
        '''
        result = self._values.get("resources")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointResources"], result)

    @builtins.property
    def served_model_name(self) -> typing.Optional[builtins.str]:
        '''Extension: the model id a cold ``models`` route answers;

        the LLMService's name when unset (the example runtimes serve the model under that name).

        :schema: LlmServiceSpecEndpoint#servedModelName
        '''
        result = self._values.get("served_model_name")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def websocket_max_message_bytes(self) -> typing.Optional[jsii.Number]:
        '''Extension: the largest WebSocket message either way, in bytes;

        when unset, the operator's setting (4 MiB).

        :schema: LlmServiceSpecEndpoint#websocketMaxMessageBytes
        '''
        result = self._values.get("websocket_max_message_bytes")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def websocket_max_open(self) -> typing.Optional[jsii.Number]:
        '''Extension: WebSockets one gateway keeps open at once;

        when unset, the operator's setting (16), lowered to fit a smaller ``resources.limits.memory``.

        :schema: LlmServiceSpecEndpoint#websocketMaxOpen
        '''
        result = self._values.get("websocket_max_open")
        return typing.cast(typing.Optional[jsii.Number], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecEndpoint(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointAuthentication",
    jsii_struct_bases=[],
    name_mapping={"secret_ref": "secretRef"},
)
class LlmServiceSpecEndpointAuthentication:
    def __init__(
        self,
        *,
        secret_ref: typing.Union["LlmServiceSpecEndpointAuthenticationSecretRef", typing.Dict[builtins.str, typing.Any]],
    ) -> None:
        '''Require a Bearer API key on proxied routes.

        :param secret_ref: Secret key holding the Bearer API key.

        :schema: LlmServiceSpecEndpointAuthentication
        '''
        if isinstance(secret_ref, dict):
            secret_ref = LlmServiceSpecEndpointAuthenticationSecretRef(**secret_ref)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__d3d8aa1ca2697cedb3209092b2e1fe6e8267dee05e0826e9f51cc74dd177ac7b)
            check_type(argname="argument secret_ref", value=secret_ref, expected_type=type_hints["secret_ref"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "secret_ref": secret_ref,
        }

    @builtins.property
    def secret_ref(self) -> "LlmServiceSpecEndpointAuthenticationSecretRef":
        '''Secret key holding the Bearer API key.

        :schema: LlmServiceSpecEndpointAuthentication#secretRef
        '''
        result = self._values.get("secret_ref")
        assert result is not None, "Required property 'secret_ref' is missing"
        return typing.cast("LlmServiceSpecEndpointAuthenticationSecretRef", result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecEndpointAuthentication(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointAuthenticationSecretRef",
    jsii_struct_bases=[],
    name_mapping={"key": "key", "name": "name"},
)
class LlmServiceSpecEndpointAuthenticationSecretRef:
    def __init__(self, *, key: builtins.str, name: builtins.str) -> None:
        '''Secret key holding the Bearer API key.

        :param key: Key in the Secret holding the API key.
        :param name: Name of the Secret.

        :schema: LlmServiceSpecEndpointAuthenticationSecretRef
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__7de2ba151a9f08c0d1950825ca8c236ccf11967d480b7603fb8a0fe702f641b3)
            check_type(argname="argument key", value=key, expected_type=type_hints["key"])
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "key": key,
            "name": name,
        }

    @builtins.property
    def key(self) -> builtins.str:
        '''Key in the Secret holding the API key.

        :schema: LlmServiceSpecEndpointAuthenticationSecretRef#key
        '''
        result = self._values.get("key")
        assert result is not None, "Required property 'key' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def name(self) -> builtins.str:
        '''Name of the Secret.

        :schema: LlmServiceSpecEndpointAuthenticationSecretRef#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecEndpointAuthenticationSecretRef(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointColdRoutes",
    jsii_struct_bases=[],
    name_mapping={"path": "path", "answer": "answer", "status": "status"},
)
class LlmServiceSpecEndpointColdRoutes:
    def __init__(
        self,
        *,
        path: builtins.str,
        answer: typing.Optional["LlmServiceSpecEndpointColdRoutesAnswer"] = None,
        status: typing.Optional[jsii.Number] = None,
    ) -> None:
        '''Extension: a GET/HEAD route the gateway answers itself while the backend is cold, without waking it;

        proxied as usual once warm.

        :param path: Exact request path, e.g. ``/v1/models`` or ``/health``.
        :param answer: models: the served model as an OpenAI model list; status: an empty answer with ``status``.
        :param status: HTTP status of a ``status`` answer.

        :schema: LlmServiceSpecEndpointColdRoutes
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__01fd29c46bdb70ef42e8f638293d736a64c202601aad3f36cd7832407fc92c9a)
            check_type(argname="argument path", value=path, expected_type=type_hints["path"])
            check_type(argname="argument answer", value=answer, expected_type=type_hints["answer"])
            check_type(argname="argument status", value=status, expected_type=type_hints["status"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "path": path,
        }
        if answer is not None:
            self._values["answer"] = answer
        if status is not None:
            self._values["status"] = status

    @builtins.property
    def path(self) -> builtins.str:
        '''Exact request path, e.g. ``/v1/models`` or ``/health``.

        :schema: LlmServiceSpecEndpointColdRoutes#path
        '''
        result = self._values.get("path")
        assert result is not None, "Required property 'path' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def answer(self) -> typing.Optional["LlmServiceSpecEndpointColdRoutesAnswer"]:
        '''models: the served model as an OpenAI model list;

        status: an empty answer with ``status``.

        :schema: LlmServiceSpecEndpointColdRoutes#answer
        '''
        result = self._values.get("answer")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointColdRoutesAnswer"], result)

    @builtins.property
    def status(self) -> typing.Optional[jsii.Number]:
        '''HTTP status of a ``status`` answer.

        :schema: LlmServiceSpecEndpointColdRoutes#status
        '''
        result = self._values.get("status")
        return typing.cast(typing.Optional[jsii.Number], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecEndpointColdRoutes(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.enum(jsii_type="ionoctayaserving.LlmServiceSpecEndpointColdRoutesAnswer")
class LlmServiceSpecEndpointColdRoutesAnswer(enum.Enum):
    '''models: the served model as an OpenAI model list;

    status: an empty answer with ``status``.

    :schema: LlmServiceSpecEndpointColdRoutesAnswer
    '''

    MODELS = "MODELS"
    '''models.'''
    STATUS = "STATUS"
    '''status.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointColdStart",
    jsii_struct_bases=[],
    name_mapping={"heartbeat_interval": "heartbeatInterval", "mode": "mode"},
)
class LlmServiceSpecEndpointColdStart:
    def __init__(
        self,
        *,
        heartbeat_interval: typing.Optional[builtins.str] = None,
        mode: typing.Optional["LlmServiceSpecEndpointColdStartMode"] = None,
    ) -> None:
        '''Behaviour while the backend is cold.

        :param heartbeat_interval: Interval of SSE keepalive comments while a streaming request waits.
        :param mode: keepalive holds cold requests (SSE heartbeats for streams); reject answers 503 with Retry-After.

        :schema: LlmServiceSpecEndpointColdStart
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__99901380ab43ad95bc70e6917eabc172f99e43ffe4055ce1214eafc7e75e44d6)
            check_type(argname="argument heartbeat_interval", value=heartbeat_interval, expected_type=type_hints["heartbeat_interval"])
            check_type(argname="argument mode", value=mode, expected_type=type_hints["mode"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if heartbeat_interval is not None:
            self._values["heartbeat_interval"] = heartbeat_interval
        if mode is not None:
            self._values["mode"] = mode

    @builtins.property
    def heartbeat_interval(self) -> typing.Optional[builtins.str]:
        '''Interval of SSE keepalive comments while a streaming request waits.

        :schema: LlmServiceSpecEndpointColdStart#heartbeatInterval
        '''
        result = self._values.get("heartbeat_interval")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def mode(self) -> typing.Optional["LlmServiceSpecEndpointColdStartMode"]:
        '''keepalive holds cold requests (SSE heartbeats for streams);

        reject answers 503 with Retry-After.

        :schema: LlmServiceSpecEndpointColdStart#mode
        '''
        result = self._values.get("mode")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointColdStartMode"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecEndpointColdStart(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.enum(jsii_type="ionoctayaserving.LlmServiceSpecEndpointColdStartMode")
class LlmServiceSpecEndpointColdStartMode(enum.Enum):
    '''keepalive holds cold requests (SSE heartbeats for streams);

    reject answers 503 with Retry-After.

    :schema: LlmServiceSpecEndpointColdStartMode
    '''

    KEEPALIVE = "KEEPALIVE"
    '''keepalive.'''
    REJECT = "REJECT"
    '''reject.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointResources",
    jsii_struct_bases=[],
    name_mapping={"limits": "limits", "requests": "requests"},
)
class LlmServiceSpecEndpointResources:
    def __init__(
        self,
        *,
        limits: typing.Optional[typing.Union["LlmServiceSpecEndpointResourcesLimits", typing.Dict[builtins.str, typing.Any]]] = None,
        requests: typing.Optional[typing.Union["LlmServiceSpecEndpointResourcesRequests", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''Gateway container resources.

        :param limits: Gateway container limits.
        :param requests: Gateway container requests.

        :schema: LlmServiceSpecEndpointResources
        '''
        if isinstance(limits, dict):
            limits = LlmServiceSpecEndpointResourcesLimits(**limits)
        if isinstance(requests, dict):
            requests = LlmServiceSpecEndpointResourcesRequests(**requests)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__c4ac46ee02c877d7c47dbeb22aa6f7885efd4e1e8b5ba21c1a6138c584193be0)
            check_type(argname="argument limits", value=limits, expected_type=type_hints["limits"])
            check_type(argname="argument requests", value=requests, expected_type=type_hints["requests"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if limits is not None:
            self._values["limits"] = limits
        if requests is not None:
            self._values["requests"] = requests

    @builtins.property
    def limits(self) -> typing.Optional["LlmServiceSpecEndpointResourcesLimits"]:
        '''Gateway container limits.

        :schema: LlmServiceSpecEndpointResources#limits
        '''
        result = self._values.get("limits")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointResourcesLimits"], result)

    @builtins.property
    def requests(self) -> typing.Optional["LlmServiceSpecEndpointResourcesRequests"]:
        '''Gateway container requests.

        :schema: LlmServiceSpecEndpointResources#requests
        '''
        result = self._values.get("requests")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointResourcesRequests"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecEndpointResources(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointResourcesLimits",
    jsii_struct_bases=[],
    name_mapping={"cpu": "cpu", "memory": "memory"},
)
class LlmServiceSpecEndpointResourcesLimits:
    def __init__(
        self,
        *,
        cpu: typing.Optional["LlmServiceSpecEndpointResourcesLimitsCpu"] = None,
        memory: typing.Optional["LlmServiceSpecEndpointResourcesLimitsMemory"] = None,
    ) -> None:
        '''Gateway container limits.

        :param cpu: CPU quantity.
        :param memory: Memory quantity.

        :schema: LlmServiceSpecEndpointResourcesLimits
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__9688083f9c8b5a60d666c16221a66281d1bbd3367e35eaca30a12cbd3bf0e280)
            check_type(argname="argument cpu", value=cpu, expected_type=type_hints["cpu"])
            check_type(argname="argument memory", value=memory, expected_type=type_hints["memory"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if cpu is not None:
            self._values["cpu"] = cpu
        if memory is not None:
            self._values["memory"] = memory

    @builtins.property
    def cpu(self) -> typing.Optional["LlmServiceSpecEndpointResourcesLimitsCpu"]:
        '''CPU quantity.

        :schema: LlmServiceSpecEndpointResourcesLimits#cpu
        '''
        result = self._values.get("cpu")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointResourcesLimitsCpu"], result)

    @builtins.property
    def memory(self) -> typing.Optional["LlmServiceSpecEndpointResourcesLimitsMemory"]:
        '''Memory quantity.

        :schema: LlmServiceSpecEndpointResourcesLimits#memory
        '''
        result = self._values.get("memory")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointResourcesLimitsMemory"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecEndpointResourcesLimits(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class LlmServiceSpecEndpointResourcesLimitsCpu(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointResourcesLimitsCpu",
):
    '''CPU quantity.

    :schema: LlmServiceSpecEndpointResourcesLimitsCpu
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "LlmServiceSpecEndpointResourcesLimitsCpu":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__df99deb1afa853992defa40069e0b694164a8d4a180b74d0e8136d45cb79f8a1)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecEndpointResourcesLimitsCpu", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "LlmServiceSpecEndpointResourcesLimitsCpu":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__cb164782a93655fc1261caac68e136a66d2ca537413f36c8a56824d26fc154bb)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecEndpointResourcesLimitsCpu", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


class LlmServiceSpecEndpointResourcesLimitsMemory(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointResourcesLimitsMemory",
):
    '''Memory quantity.

    :schema: LlmServiceSpecEndpointResourcesLimitsMemory
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "LlmServiceSpecEndpointResourcesLimitsMemory":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__152436855cec56a852704784163191f36aeed90633b9e49d3cbfbdb65a43c94e)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecEndpointResourcesLimitsMemory", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "LlmServiceSpecEndpointResourcesLimitsMemory":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__0396ee8872e53bdc423e42752abef81f1ceca1ed96621d37e81bfd57710bd288)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecEndpointResourcesLimitsMemory", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointResourcesRequests",
    jsii_struct_bases=[],
    name_mapping={"cpu": "cpu", "memory": "memory"},
)
class LlmServiceSpecEndpointResourcesRequests:
    def __init__(
        self,
        *,
        cpu: typing.Optional["LlmServiceSpecEndpointResourcesRequestsCpu"] = None,
        memory: typing.Optional["LlmServiceSpecEndpointResourcesRequestsMemory"] = None,
    ) -> None:
        '''Gateway container requests.

        :param cpu: CPU quantity.
        :param memory: Memory quantity.

        :schema: LlmServiceSpecEndpointResourcesRequests
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__da0897ea886c57559b610cce96a7e3e1ba37686d52c4830779acf369cec3b2a6)
            check_type(argname="argument cpu", value=cpu, expected_type=type_hints["cpu"])
            check_type(argname="argument memory", value=memory, expected_type=type_hints["memory"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if cpu is not None:
            self._values["cpu"] = cpu
        if memory is not None:
            self._values["memory"] = memory

    @builtins.property
    def cpu(self) -> typing.Optional["LlmServiceSpecEndpointResourcesRequestsCpu"]:
        '''CPU quantity.

        :schema: LlmServiceSpecEndpointResourcesRequests#cpu
        '''
        result = self._values.get("cpu")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointResourcesRequestsCpu"], result)

    @builtins.property
    def memory(
        self,
    ) -> typing.Optional["LlmServiceSpecEndpointResourcesRequestsMemory"]:
        '''Memory quantity.

        :schema: LlmServiceSpecEndpointResourcesRequests#memory
        '''
        result = self._values.get("memory")
        return typing.cast(typing.Optional["LlmServiceSpecEndpointResourcesRequestsMemory"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecEndpointResourcesRequests(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class LlmServiceSpecEndpointResourcesRequestsCpu(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointResourcesRequestsCpu",
):
    '''CPU quantity.

    :schema: LlmServiceSpecEndpointResourcesRequestsCpu
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "LlmServiceSpecEndpointResourcesRequestsCpu":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__80afffbfa1f74bc46fee24ffdedfd31ebeff5ec6cc3d93435c00ee78267b6804)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecEndpointResourcesRequestsCpu", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "LlmServiceSpecEndpointResourcesRequestsCpu":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__5717d156e68b6af7a1253b068616e4691a84274b8fc55b1abb5366e82b1fe720)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecEndpointResourcesRequestsCpu", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


class LlmServiceSpecEndpointResourcesRequestsMemory(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.LlmServiceSpecEndpointResourcesRequestsMemory",
):
    '''Memory quantity.

    :schema: LlmServiceSpecEndpointResourcesRequestsMemory
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(
        cls,
        value: jsii.Number,
    ) -> "LlmServiceSpecEndpointResourcesRequestsMemory":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__4b554a43ddd7c2eed2ebd95c5ecac877335c0db9746e14149b94e47296f44b36)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecEndpointResourcesRequestsMemory", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "LlmServiceSpecEndpointResourcesRequestsMemory":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__72c321ac05b17ccd7950c1c2de1d166ae4e875a5d6c9baad03c9138f49a74d00)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecEndpointResourcesRequestsMemory", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecImagePullSecrets",
    jsii_struct_bases=[],
    name_mapping={"name": "name"},
)
class LlmServiceSpecImagePullSecrets:
    def __init__(self, *, name: builtins.str) -> None:
        '''``corev1.LocalObjectReference``: the name of an object in the same namespace.

        :param name: 

        :schema: LlmServiceSpecImagePullSecrets
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__5d618aa125bdb422a3050d63f43570f647ce11208adf0204088e6277294d8df8)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
        }

    @builtins.property
    def name(self) -> builtins.str:
        '''
        :schema: LlmServiceSpecImagePullSecrets#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecImagePullSecrets(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecModel",
    jsii_struct_bases=[],
    name_mapping={"catalog_ref": "catalogRef", "source": "source"},
)
class LlmServiceSpecModel:
    def __init__(
        self,
        *,
        catalog_ref: typing.Optional[builtins.str] = None,
        source: typing.Optional[typing.Union["LlmServiceSpecModelSource", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''The model weights.

        :param catalog_ref: Reserved, not implemented: a model catalog entry instead of a source.
        :param source: Where the weights come from. Exactly one of source or catalogRef.

        :schema: LlmServiceSpecModel
        '''
        if isinstance(source, dict):
            source = LlmServiceSpecModelSource(**source)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__88803644bbc3350e4e38e31e5cf047331fd23613eba27d74ddcfd5d517826951)
            check_type(argname="argument catalog_ref", value=catalog_ref, expected_type=type_hints["catalog_ref"])
            check_type(argname="argument source", value=source, expected_type=type_hints["source"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if catalog_ref is not None:
            self._values["catalog_ref"] = catalog_ref
        if source is not None:
            self._values["source"] = source

    @builtins.property
    def catalog_ref(self) -> typing.Optional[builtins.str]:
        '''Reserved, not implemented: a model catalog entry instead of a source.

        :schema: LlmServiceSpecModel#catalogRef
        '''
        result = self._values.get("catalog_ref")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def source(self) -> typing.Optional["LlmServiceSpecModelSource"]:
        '''Where the weights come from.

        Exactly one of source or catalogRef.

        :schema: LlmServiceSpecModel#source
        '''
        result = self._values.get("source")
        return typing.cast(typing.Optional["LlmServiceSpecModelSource"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecModel(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecModelSource",
    jsii_struct_bases=[],
    name_mapping={"uri": "uri", "secret_ref": "secretRef"},
)
class LlmServiceSpecModelSource:
    def __init__(
        self,
        *,
        uri: builtins.str,
        secret_ref: typing.Optional[typing.Union["LlmServiceSpecModelSourceSecretRef", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''Where the weights come from.

        Exactly one of source or catalogRef.

        :param uri: hf://org/name[@revision] (or huggingface://), modelscope://org/name[@revision], oci://registry/repository@sha256: (no tags), or pvc://claim[/subpath].
        :param secret_ref: A kubernetes.io/dockerconfigjson Secret for the registry; only allowed for oci:// sources.

        :schema: LlmServiceSpecModelSource
        '''
        if isinstance(secret_ref, dict):
            secret_ref = LlmServiceSpecModelSourceSecretRef(**secret_ref)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__f58db08a144c5c85dcc24d56624474d826eea5fb77eb4aa3ef13b93032a32758)
            check_type(argname="argument uri", value=uri, expected_type=type_hints["uri"])
            check_type(argname="argument secret_ref", value=secret_ref, expected_type=type_hints["secret_ref"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "uri": uri,
        }
        if secret_ref is not None:
            self._values["secret_ref"] = secret_ref

    @builtins.property
    def uri(self) -> builtins.str:
        '''hf://org/name[@revision] (or huggingface://), modelscope://org/name[@revision], oci://registry/repository@sha256: (no tags), or pvc://claim[/subpath].

        :schema: LlmServiceSpecModelSource#uri
        '''
        result = self._values.get("uri")
        assert result is not None, "Required property 'uri' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def secret_ref(self) -> typing.Optional["LlmServiceSpecModelSourceSecretRef"]:
        '''A kubernetes.io/dockerconfigjson Secret for the registry; only allowed for oci:// sources.

        :schema: LlmServiceSpecModelSource#secretRef
        '''
        result = self._values.get("secret_ref")
        return typing.cast(typing.Optional["LlmServiceSpecModelSourceSecretRef"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecModelSource(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecModelSourceSecretRef",
    jsii_struct_bases=[],
    name_mapping={"name": "name"},
)
class LlmServiceSpecModelSourceSecretRef:
    def __init__(self, *, name: builtins.str) -> None:
        '''A kubernetes.io/dockerconfigjson Secret for the registry; only allowed for oci:// sources.

        :param name: Name of the Secret.

        :schema: LlmServiceSpecModelSourceSecretRef
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__07e9954f4013b737d4d48ef4420516ce657e4d9dd45c5dc730886193a1b5f34c)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
        }

    @builtins.property
    def name(self) -> builtins.str:
        '''Name of the Secret.

        :schema: LlmServiceSpecModelSourceSecretRef#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecModelSourceSecretRef(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecResources",
    jsii_struct_bases=[],
    name_mapping={
        "accelerators": "accelerators",
        "cpu": "cpu",
        "fraction": "fraction",
        "memory": "memory",
        "shared_memory": "sharedMemory",
    },
)
class LlmServiceSpecResources:
    def __init__(
        self,
        *,
        accelerators: typing.Optional[jsii.Number] = None,
        cpu: typing.Optional["LlmServiceSpecResourcesCpu"] = None,
        fraction: typing.Optional[typing.Union["LlmServiceSpecResourcesFraction", typing.Dict[builtins.str, typing.Any]]] = None,
        memory: typing.Optional["LlmServiceSpecResourcesMemory"] = None,
        shared_memory: typing.Optional[builtins.str] = None,
    ) -> None:
        '''Backend resources.

        :param accelerators: Whole accelerator devices per backend replica.
        :param cpu: CPU request of the backend container.
        :param fraction: Reserved, not implemented: fractional accelerators.
        :param memory: Memory request and limit of the backend container.
        :param shared_memory: Extension: size of the memory-backed /dev/shm of the serving container, whole Mi or Gi (e.g. 16Gi). Default: half of memory when memory is set, else 8Gi. Pages written there count against the container's memory limit.

        :schema: LlmServiceSpecResources
        '''
        if isinstance(fraction, dict):
            fraction = LlmServiceSpecResourcesFraction(**fraction)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__387a3d09896aa08c6cda73bde9430f57415104e644bda306be344c06f0c58063)
            check_type(argname="argument accelerators", value=accelerators, expected_type=type_hints["accelerators"])
            check_type(argname="argument cpu", value=cpu, expected_type=type_hints["cpu"])
            check_type(argname="argument fraction", value=fraction, expected_type=type_hints["fraction"])
            check_type(argname="argument memory", value=memory, expected_type=type_hints["memory"])
            check_type(argname="argument shared_memory", value=shared_memory, expected_type=type_hints["shared_memory"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if accelerators is not None:
            self._values["accelerators"] = accelerators
        if cpu is not None:
            self._values["cpu"] = cpu
        if fraction is not None:
            self._values["fraction"] = fraction
        if memory is not None:
            self._values["memory"] = memory
        if shared_memory is not None:
            self._values["shared_memory"] = shared_memory

    @builtins.property
    def accelerators(self) -> typing.Optional[jsii.Number]:
        '''Whole accelerator devices per backend replica.

        :schema: LlmServiceSpecResources#accelerators
        '''
        result = self._values.get("accelerators")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def cpu(self) -> typing.Optional["LlmServiceSpecResourcesCpu"]:
        '''CPU request of the backend container.

        :schema: LlmServiceSpecResources#cpu
        '''
        result = self._values.get("cpu")
        return typing.cast(typing.Optional["LlmServiceSpecResourcesCpu"], result)

    @builtins.property
    def fraction(self) -> typing.Optional["LlmServiceSpecResourcesFraction"]:
        '''Reserved, not implemented: fractional accelerators.

        :schema: LlmServiceSpecResources#fraction
        '''
        result = self._values.get("fraction")
        return typing.cast(typing.Optional["LlmServiceSpecResourcesFraction"], result)

    @builtins.property
    def memory(self) -> typing.Optional["LlmServiceSpecResourcesMemory"]:
        '''Memory request and limit of the backend container.

        :schema: LlmServiceSpecResources#memory
        '''
        result = self._values.get("memory")
        return typing.cast(typing.Optional["LlmServiceSpecResourcesMemory"], result)

    @builtins.property
    def shared_memory(self) -> typing.Optional[builtins.str]:
        '''Extension: size of the memory-backed /dev/shm of the serving container, whole Mi or Gi (e.g. 16Gi). Default: half of memory when memory is set, else 8Gi. Pages written there count against the container's memory limit.

        :schema: LlmServiceSpecResources#sharedMemory
        '''
        result = self._values.get("shared_memory")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecResources(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class LlmServiceSpecResourcesCpu(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.LlmServiceSpecResourcesCpu",
):
    '''CPU request of the backend container.

    :schema: LlmServiceSpecResourcesCpu
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(cls, value: jsii.Number) -> "LlmServiceSpecResourcesCpu":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__c69232c1bff883dabf0c7d22ad1f25c279bdd30cb03e7279a5de29a3a575adee)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecResourcesCpu", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(cls, value: builtins.str) -> "LlmServiceSpecResourcesCpu":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__0605f97e8aa3fbdfc0680b5ae547958d99e04dff5d5c95d6048fe79c2077fa57)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecResourcesCpu", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecResourcesFraction",
    jsii_struct_bases=[],
    name_mapping={"cores": "cores", "memory": "memory"},
)
class LlmServiceSpecResourcesFraction:
    def __init__(
        self,
        *,
        cores: typing.Optional[jsii.Number] = None,
        memory: typing.Optional["LlmServiceSpecResourcesFractionMemory"] = None,
    ) -> None:
        '''Reserved, not implemented: fractional accelerators.

        :param cores: Reserved: percentage of accelerator cores per replica.
        :param memory: Reserved: accelerator memory per replica.

        :schema: LlmServiceSpecResourcesFraction
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__4723c48fa3bbfd5f9952c44e584a0f3c6569f050897236b9de6b13c2f06c1b18)
            check_type(argname="argument cores", value=cores, expected_type=type_hints["cores"])
            check_type(argname="argument memory", value=memory, expected_type=type_hints["memory"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if cores is not None:
            self._values["cores"] = cores
        if memory is not None:
            self._values["memory"] = memory

    @builtins.property
    def cores(self) -> typing.Optional[jsii.Number]:
        '''Reserved: percentage of accelerator cores per replica.

        :schema: LlmServiceSpecResourcesFraction#cores
        '''
        result = self._values.get("cores")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def memory(self) -> typing.Optional["LlmServiceSpecResourcesFractionMemory"]:
        '''Reserved: accelerator memory per replica.

        :schema: LlmServiceSpecResourcesFraction#memory
        '''
        result = self._values.get("memory")
        return typing.cast(typing.Optional["LlmServiceSpecResourcesFractionMemory"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecResourcesFraction(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


class LlmServiceSpecResourcesFractionMemory(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.LlmServiceSpecResourcesFractionMemory",
):
    '''Reserved: accelerator memory per replica.

    :schema: LlmServiceSpecResourcesFractionMemory
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(cls, value: jsii.Number) -> "LlmServiceSpecResourcesFractionMemory":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__efb676a31257b8020fda82c19a8a01b88695856fe8ff6bedc5ee40fce6088c17)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecResourcesFractionMemory", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(
        cls,
        value: builtins.str,
    ) -> "LlmServiceSpecResourcesFractionMemory":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__d53acf7ce5d06ae36fccf4791dc5f60a213e6dec96241c1978f8fe838f3c3bc6)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecResourcesFractionMemory", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


class LlmServiceSpecResourcesMemory(
    metaclass=jsii.JSIIMeta,
    jsii_type="ionoctayaserving.LlmServiceSpecResourcesMemory",
):
    '''Memory request and limit of the backend container.

    :schema: LlmServiceSpecResourcesMemory
    '''

    @jsii.member(jsii_name="fromNumber")
    @builtins.classmethod
    def from_number(cls, value: jsii.Number) -> "LlmServiceSpecResourcesMemory":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__0cd8c63f5c1bdb9a90bec3b8297ea9f792de5de11b062b72f9614805641c416f)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecResourcesMemory", jsii.sinvoke(cls, "fromNumber", [value]))

    @jsii.member(jsii_name="fromString")
    @builtins.classmethod
    def from_string(cls, value: builtins.str) -> "LlmServiceSpecResourcesMemory":
        '''
        :param value: -
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__e1bc4817cb19692c808e7193ca284cb06197328919a65547a8b4b8e49abd0512)
            check_type(argname="argument value", value=value, expected_type=type_hints["value"])
        return typing.cast("LlmServiceSpecResourcesMemory", jsii.sinvoke(cls, "fromString", [value]))

    @builtins.property
    @jsii.member(jsii_name="value")
    def value(self) -> typing.Union[builtins.str, jsii.Number]:
        return typing.cast(typing.Union[builtins.str, jsii.Number], jsii.get(self, "value"))


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecRuntime",
    jsii_struct_bases=[],
    name_mapping={
        "args_override": "argsOverride",
        "name": "name",
        "selector": "selector",
    },
)
class LlmServiceSpecRuntime:
    def __init__(
        self,
        *,
        args_override: typing.Optional[typing.Sequence[builtins.str]] = None,
        name: typing.Optional[builtins.str] = None,
        selector: typing.Optional[typing.Union["LlmServiceSpecRuntimeSelector", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''Which InferenceRuntime serves the model.

        :param args_override: Arguments appended after the runtime's rendered args.
        :param name: The InferenceRuntime to use, by name. Exactly one of name or selector.
        :param selector: Select an InferenceRuntime by vendor preference, then highest priority; a tie at the top is an error.

        :schema: LlmServiceSpecRuntime
        '''
        if isinstance(selector, dict):
            selector = LlmServiceSpecRuntimeSelector(**selector)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__4a43893ce1ee929b794dbbf1cfcf1ddb86ebd865a99d28fbb0b6d375f74a6286)
            check_type(argname="argument args_override", value=args_override, expected_type=type_hints["args_override"])
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument selector", value=selector, expected_type=type_hints["selector"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if args_override is not None:
            self._values["args_override"] = args_override
        if name is not None:
            self._values["name"] = name
        if selector is not None:
            self._values["selector"] = selector

    @builtins.property
    def args_override(self) -> typing.Optional[typing.List[builtins.str]]:
        '''Arguments appended after the runtime's rendered args.

        :schema: LlmServiceSpecRuntime#argsOverride
        '''
        result = self._values.get("args_override")
        return typing.cast(typing.Optional[typing.List[builtins.str]], result)

    @builtins.property
    def name(self) -> typing.Optional[builtins.str]:
        '''The InferenceRuntime to use, by name.

        Exactly one of name or selector.

        :schema: LlmServiceSpecRuntime#name
        '''
        result = self._values.get("name")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def selector(self) -> typing.Optional["LlmServiceSpecRuntimeSelector"]:
        '''Select an InferenceRuntime by vendor preference, then highest priority;

        a tie at the top is an error.

        :schema: LlmServiceSpecRuntime#selector
        '''
        result = self._values.get("selector")
        return typing.cast(typing.Optional["LlmServiceSpecRuntimeSelector"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecRuntime(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecRuntimeSelector",
    jsii_struct_bases=[],
    name_mapping={"vendor": "vendor"},
)
class LlmServiceSpecRuntimeSelector:
    def __init__(
        self,
        *,
        vendor: typing.Sequence["LlmServiceSpecRuntimeSelectorVendor"],
    ) -> None:
        '''Select an InferenceRuntime by vendor preference, then highest priority;

        a tie at the top is an error.

        :param vendor: Accelerator vendors in order of preference.

        :schema: LlmServiceSpecRuntimeSelector
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__38fe96b00bf2b2616cc94b7cccafcb5704370b4fa1e34b0509193aff7a94f220)
            check_type(argname="argument vendor", value=vendor, expected_type=type_hints["vendor"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "vendor": vendor,
        }

    @builtins.property
    def vendor(self) -> typing.List["LlmServiceSpecRuntimeSelectorVendor"]:
        '''Accelerator vendors in order of preference.

        :schema: LlmServiceSpecRuntimeSelector#vendor
        '''
        result = self._values.get("vendor")
        assert result is not None, "Required property 'vendor' is missing"
        return typing.cast(typing.List["LlmServiceSpecRuntimeSelectorVendor"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecRuntimeSelector(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.enum(jsii_type="ionoctayaserving.LlmServiceSpecRuntimeSelectorVendor")
class LlmServiceSpecRuntimeSelectorVendor(enum.Enum):
    '''Accelerator vendor;

    selects the adapter. ``amd``, ``intel-gaudi``, ``cpu`` are extensions.

    :schema: LlmServiceSpecRuntimeSelectorVendor
    '''

    NVIDIA = "NVIDIA"
    '''nvidia.'''
    ASCEND = "ASCEND"
    '''ascend.'''
    AMD = "AMD"
    '''amd.'''
    INTEL_HYPHEN_GAUDI = "INTEL_HYPHEN_GAUDI"
    '''intel-gaudi.'''
    CPU = "CPU"
    '''cpu.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecScaling",
    jsii_struct_bases=[],
    name_mapping={
        "activation_timeout": "activationTimeout",
        "drain_timeout": "drainTimeout",
        "external_scaler": "externalScaler",
        "max": "max",
        "metric": "metric",
        "min": "min",
        "scale_down_stabilization": "scaleDownStabilization",
        "schedules": "schedules",
        "target": "target",
    },
)
class LlmServiceSpecScaling:
    def __init__(
        self,
        *,
        activation_timeout: typing.Optional[builtins.str] = None,
        drain_timeout: typing.Optional[builtins.str] = None,
        external_scaler: typing.Optional[typing.Union["LlmServiceSpecScalingExternalScaler", typing.Dict[builtins.str, typing.Any]]] = None,
        max: typing.Optional[jsii.Number] = None,
        metric: typing.Optional["LlmServiceSpecScalingMetric"] = None,
        min: typing.Optional[jsii.Number] = None,
        scale_down_stabilization: typing.Optional[builtins.str] = None,
        schedules: typing.Optional[typing.Sequence[typing.Union["LlmServiceSpecScalingSchedules", typing.Dict[builtins.str, typing.Any]]]] = None,
        target: typing.Optional[jsii.Number] = None,
    ) -> None:
        '''Backend replica bounds and timing (KEDA owns the replicas).

        :param activation_timeout: How long a cold request waits for a Ready backend; demand stops after it.
        :param drain_timeout: preStop drain time when the runtime enables preStopDrain.
        :param external_scaler: How KEDA reaches the ExternalScaler.
        :param max: Most backend replicas; at least min.
        :param metric: Scaling metric; only queueDepth is implemented (kvCacheUtil is reserved).
        :param min: Fewest backend replicas; 0 scales to zero.
        :param scale_down_stabilization: HPA scale-down stabilization window and KEDA cooldown; whole seconds, 0s..1h.
        :param schedules: Extension: windows during which the backend is kept warm (KEDA cron triggers), at most 16.
        :param target: Queue-depth target per backend replica.

        :schema: LlmServiceSpecScaling
        '''
        if isinstance(external_scaler, dict):
            external_scaler = LlmServiceSpecScalingExternalScaler(**external_scaler)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__a7fc0446fb6442e22f813cd691cd11cdbc086898b3b1a9c8e836e26abd328dde)
            check_type(argname="argument activation_timeout", value=activation_timeout, expected_type=type_hints["activation_timeout"])
            check_type(argname="argument drain_timeout", value=drain_timeout, expected_type=type_hints["drain_timeout"])
            check_type(argname="argument external_scaler", value=external_scaler, expected_type=type_hints["external_scaler"])
            check_type(argname="argument max", value=max, expected_type=type_hints["max"])
            check_type(argname="argument metric", value=metric, expected_type=type_hints["metric"])
            check_type(argname="argument min", value=min, expected_type=type_hints["min"])
            check_type(argname="argument scale_down_stabilization", value=scale_down_stabilization, expected_type=type_hints["scale_down_stabilization"])
            check_type(argname="argument schedules", value=schedules, expected_type=type_hints["schedules"])
            check_type(argname="argument target", value=target, expected_type=type_hints["target"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if activation_timeout is not None:
            self._values["activation_timeout"] = activation_timeout
        if drain_timeout is not None:
            self._values["drain_timeout"] = drain_timeout
        if external_scaler is not None:
            self._values["external_scaler"] = external_scaler
        if max is not None:
            self._values["max"] = max
        if metric is not None:
            self._values["metric"] = metric
        if min is not None:
            self._values["min"] = min
        if scale_down_stabilization is not None:
            self._values["scale_down_stabilization"] = scale_down_stabilization
        if schedules is not None:
            self._values["schedules"] = schedules
        if target is not None:
            self._values["target"] = target

    @builtins.property
    def activation_timeout(self) -> typing.Optional[builtins.str]:
        '''How long a cold request waits for a Ready backend;

        demand stops after it.

        :schema: LlmServiceSpecScaling#activationTimeout
        '''
        result = self._values.get("activation_timeout")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def drain_timeout(self) -> typing.Optional[builtins.str]:
        '''preStop drain time when the runtime enables preStopDrain.

        :schema: LlmServiceSpecScaling#drainTimeout
        '''
        result = self._values.get("drain_timeout")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def external_scaler(self) -> typing.Optional["LlmServiceSpecScalingExternalScaler"]:
        '''How KEDA reaches the ExternalScaler.

        :schema: LlmServiceSpecScaling#externalScaler
        '''
        result = self._values.get("external_scaler")
        return typing.cast(typing.Optional["LlmServiceSpecScalingExternalScaler"], result)

    @builtins.property
    def max(self) -> typing.Optional[jsii.Number]:
        '''Most backend replicas;

        at least min.

        :schema: LlmServiceSpecScaling#max
        '''
        result = self._values.get("max")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def metric(self) -> typing.Optional["LlmServiceSpecScalingMetric"]:
        '''Scaling metric;

        only queueDepth is implemented (kvCacheUtil is reserved).

        :schema: LlmServiceSpecScaling#metric
        '''
        result = self._values.get("metric")
        return typing.cast(typing.Optional["LlmServiceSpecScalingMetric"], result)

    @builtins.property
    def min(self) -> typing.Optional[jsii.Number]:
        '''Fewest backend replicas;

        0 scales to zero.

        :schema: LlmServiceSpecScaling#min
        '''
        result = self._values.get("min")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def scale_down_stabilization(self) -> typing.Optional[builtins.str]:
        '''HPA scale-down stabilization window and KEDA cooldown;

        whole seconds, 0s..1h.

        :schema: LlmServiceSpecScaling#scaleDownStabilization
        '''
        result = self._values.get("scale_down_stabilization")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def schedules(
        self,
    ) -> typing.Optional[typing.List["LlmServiceSpecScalingSchedules"]]:
        '''Extension: windows during which the backend is kept warm (KEDA cron triggers), at most 16.

        :schema: LlmServiceSpecScaling#schedules
        '''
        result = self._values.get("schedules")
        return typing.cast(typing.Optional[typing.List["LlmServiceSpecScalingSchedules"]], result)

    @builtins.property
    def target(self) -> typing.Optional[jsii.Number]:
        '''Queue-depth target per backend replica.

        :schema: LlmServiceSpecScaling#target
        '''
        result = self._values.get("target")
        return typing.cast(typing.Optional[jsii.Number], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecScaling(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecScalingExternalScaler",
    jsii_struct_bases=[],
    name_mapping={"tls": "tls"},
)
class LlmServiceSpecScalingExternalScaler:
    def __init__(
        self,
        *,
        tls: typing.Optional[typing.Union["LlmServiceSpecScalingExternalScalerTls", typing.Dict[builtins.str, typing.Any]]] = None,
    ) -> None:
        '''How KEDA reaches the ExternalScaler.

        :param tls: Mutual TLS between KEDA and the scaler; plaintext when unset.

        :schema: LlmServiceSpecScalingExternalScaler
        '''
        if isinstance(tls, dict):
            tls = LlmServiceSpecScalingExternalScalerTls(**tls)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__b796b75b466bcfc8a0e74e339f42e5f1069d65bb27cbb722912f3980e083ab04)
            check_type(argname="argument tls", value=tls, expected_type=type_hints["tls"])
        self._values: typing.Dict[builtins.str, typing.Any] = {}
        if tls is not None:
            self._values["tls"] = tls

    @builtins.property
    def tls(self) -> typing.Optional["LlmServiceSpecScalingExternalScalerTls"]:
        '''Mutual TLS between KEDA and the scaler;

        plaintext when unset.

        :schema: LlmServiceSpecScalingExternalScaler#tls
        '''
        result = self._values.get("tls")
        return typing.cast(typing.Optional["LlmServiceSpecScalingExternalScalerTls"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecScalingExternalScaler(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecScalingExternalScalerTls",
    jsii_struct_bases=[],
    name_mapping={
        "authentication_ref": "authenticationRef",
        "server_secret_name": "serverSecretName",
    },
)
class LlmServiceSpecScalingExternalScalerTls:
    def __init__(
        self,
        *,
        authentication_ref: typing.Union["LlmServiceSpecScalingExternalScalerTlsAuthenticationRef", typing.Dict[builtins.str, typing.Any]],
        server_secret_name: builtins.str,
    ) -> None:
        '''Mutual TLS between KEDA and the scaler;

        plaintext when unset.

        :param authentication_ref: KEDA object providing caCert, tlsClientCert and tlsClientKey.
        :param server_secret_name: Secret with tls.crt, tls.key and ca.crt for the scaler; its certificate must be valid for -scaler..svc.

        :schema: LlmServiceSpecScalingExternalScalerTls
        '''
        if isinstance(authentication_ref, dict):
            authentication_ref = LlmServiceSpecScalingExternalScalerTlsAuthenticationRef(**authentication_ref)
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__e3dec3c21bf91074eea92a682454a6bf41fcb58383adfa1921fc4feb37e1e366)
            check_type(argname="argument authentication_ref", value=authentication_ref, expected_type=type_hints["authentication_ref"])
            check_type(argname="argument server_secret_name", value=server_secret_name, expected_type=type_hints["server_secret_name"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "authentication_ref": authentication_ref,
            "server_secret_name": server_secret_name,
        }

    @builtins.property
    def authentication_ref(
        self,
    ) -> "LlmServiceSpecScalingExternalScalerTlsAuthenticationRef":
        '''KEDA object providing caCert, tlsClientCert and tlsClientKey.

        :schema: LlmServiceSpecScalingExternalScalerTls#authenticationRef
        '''
        result = self._values.get("authentication_ref")
        assert result is not None, "Required property 'authentication_ref' is missing"
        return typing.cast("LlmServiceSpecScalingExternalScalerTlsAuthenticationRef", result)

    @builtins.property
    def server_secret_name(self) -> builtins.str:
        '''Secret with tls.crt, tls.key and ca.crt for the scaler; its certificate must be valid for -scaler..svc.

        :schema: LlmServiceSpecScalingExternalScalerTls#serverSecretName
        '''
        result = self._values.get("server_secret_name")
        assert result is not None, "Required property 'server_secret_name' is missing"
        return typing.cast(builtins.str, result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecScalingExternalScalerTls(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecScalingExternalScalerTlsAuthenticationRef",
    jsii_struct_bases=[],
    name_mapping={"name": "name", "kind": "kind"},
)
class LlmServiceSpecScalingExternalScalerTlsAuthenticationRef:
    def __init__(
        self,
        *,
        name: builtins.str,
        kind: typing.Optional["LlmServiceSpecScalingExternalScalerTlsAuthenticationRefKind"] = None,
    ) -> None:
        '''KEDA object providing caCert, tlsClientCert and tlsClientKey.

        :param name: Name of the KEDA authentication object.
        :param kind: TriggerAuthentication (namespaced) or ClusterTriggerAuthentication.

        :schema: LlmServiceSpecScalingExternalScalerTlsAuthenticationRef
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__990116bafc44b13d11a37bf27e76cd6cefc4753cb8c0545454df18543080dc77)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument kind", value=kind, expected_type=type_hints["kind"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
        }
        if kind is not None:
            self._values["kind"] = kind

    @builtins.property
    def name(self) -> builtins.str:
        '''Name of the KEDA authentication object.

        :schema: LlmServiceSpecScalingExternalScalerTlsAuthenticationRef#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def kind(
        self,
    ) -> typing.Optional["LlmServiceSpecScalingExternalScalerTlsAuthenticationRefKind"]:
        '''TriggerAuthentication (namespaced) or ClusterTriggerAuthentication.

        :schema: LlmServiceSpecScalingExternalScalerTlsAuthenticationRef#kind
        '''
        result = self._values.get("kind")
        return typing.cast(typing.Optional["LlmServiceSpecScalingExternalScalerTlsAuthenticationRefKind"], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecScalingExternalScalerTlsAuthenticationRef(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


@jsii.enum(
    jsii_type="ionoctayaserving.LlmServiceSpecScalingExternalScalerTlsAuthenticationRefKind"
)
class LlmServiceSpecScalingExternalScalerTlsAuthenticationRefKind(enum.Enum):
    '''TriggerAuthentication (namespaced) or ClusterTriggerAuthentication.

    :schema: LlmServiceSpecScalingExternalScalerTlsAuthenticationRefKind
    '''

    TRIGGER_AUTHENTICATION = "TRIGGER_AUTHENTICATION"
    '''TriggerAuthentication.'''
    CLUSTER_TRIGGER_AUTHENTICATION = "CLUSTER_TRIGGER_AUTHENTICATION"
    '''ClusterTriggerAuthentication.'''


@jsii.enum(jsii_type="ionoctayaserving.LlmServiceSpecScalingMetric")
class LlmServiceSpecScalingMetric(enum.Enum):
    '''Scaling metric;

    only queueDepth is implemented (kvCacheUtil is reserved).

    :schema: LlmServiceSpecScalingMetric
    '''

    QUEUE_DEPTH = "QUEUE_DEPTH"
    '''queueDepth.'''
    KV_CACHE_UTIL = "KV_CACHE_UTIL"
    '''kvCacheUtil.'''


@jsii.data_type(
    jsii_type="ionoctayaserving.LlmServiceSpecScalingSchedules",
    jsii_struct_bases=[],
    name_mapping={
        "name": "name",
        "start": "start",
        "duration": "duration",
        "end": "end",
        "min_replicas": "minReplicas",
        "timezone": "timezone",
    },
)
class LlmServiceSpecScalingSchedules:
    def __init__(
        self,
        *,
        name: builtins.str,
        start: builtins.str,
        duration: typing.Optional[builtins.str] = None,
        end: typing.Optional[builtins.str] = None,
        min_replicas: typing.Optional[jsii.Number] = None,
        timezone: typing.Optional[builtins.str] = None,
    ) -> None:
        '''Extension: a recurring window during which the backend is kept warm, whatever the demand.

        Rendered as a KEDA ``cron`` trigger beside the demand trigger; KEDA scales to the highest of them, so requests still scale the backend above ``minReplicas`` within a window.

        :param name: Names the window in status and in the trigger.
        :param start: Five-field cron expression (minute hour day-of-month month day-of-week) of each window's start.
        :param duration: Length of each window in whole minutes, at most 24h; needs a start at one minute and hour.
        :param end: Cron expression of each window's end. Exactly one of end or duration.
        :param min_replicas: Backend replicas kept up during the window (KEDA's desiredReplicas); at most scaling.max.
        :param timezone: IANA time zone the expressions are read in.

        :schema: LlmServiceSpecScalingSchedules
        '''
        if __debug__:
            type_hints = cached_type_hints(_typecheckingstub__bd30f0c167c929e5b29e45aa79b6a6c57c03d7d5932116175d308ccc164682a3)
            check_type(argname="argument name", value=name, expected_type=type_hints["name"])
            check_type(argname="argument start", value=start, expected_type=type_hints["start"])
            check_type(argname="argument duration", value=duration, expected_type=type_hints["duration"])
            check_type(argname="argument end", value=end, expected_type=type_hints["end"])
            check_type(argname="argument min_replicas", value=min_replicas, expected_type=type_hints["min_replicas"])
            check_type(argname="argument timezone", value=timezone, expected_type=type_hints["timezone"])
        self._values: typing.Dict[builtins.str, typing.Any] = {
            "name": name,
            "start": start,
        }
        if duration is not None:
            self._values["duration"] = duration
        if end is not None:
            self._values["end"] = end
        if min_replicas is not None:
            self._values["min_replicas"] = min_replicas
        if timezone is not None:
            self._values["timezone"] = timezone

    @builtins.property
    def name(self) -> builtins.str:
        '''Names the window in status and in the trigger.

        :schema: LlmServiceSpecScalingSchedules#name
        '''
        result = self._values.get("name")
        assert result is not None, "Required property 'name' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def start(self) -> builtins.str:
        '''Five-field cron expression (minute hour day-of-month month day-of-week) of each window's start.

        :schema: LlmServiceSpecScalingSchedules#start
        '''
        result = self._values.get("start")
        assert result is not None, "Required property 'start' is missing"
        return typing.cast(builtins.str, result)

    @builtins.property
    def duration(self) -> typing.Optional[builtins.str]:
        '''Length of each window in whole minutes, at most 24h;

        needs a start at one minute and hour.

        :schema: LlmServiceSpecScalingSchedules#duration
        '''
        result = self._values.get("duration")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def end(self) -> typing.Optional[builtins.str]:
        '''Cron expression of each window's end.

        Exactly one of end or duration.

        :schema: LlmServiceSpecScalingSchedules#end
        '''
        result = self._values.get("end")
        return typing.cast(typing.Optional[builtins.str], result)

    @builtins.property
    def min_replicas(self) -> typing.Optional[jsii.Number]:
        '''Backend replicas kept up during the window (KEDA's desiredReplicas);

        at most scaling.max.

        :schema: LlmServiceSpecScalingSchedules#minReplicas
        '''
        result = self._values.get("min_replicas")
        return typing.cast(typing.Optional[jsii.Number], result)

    @builtins.property
    def timezone(self) -> typing.Optional[builtins.str]:
        '''IANA time zone the expressions are read in.

        :schema: LlmServiceSpecScalingSchedules#timezone
        '''
        result = self._values.get("timezone")
        return typing.cast(typing.Optional[builtins.str], result)

    def __eq__(self, rhs: typing.Any) -> builtins.bool:
        return isinstance(rhs, self.__class__) and rhs._values == self._values

    def __ne__(self, rhs: typing.Any) -> builtins.bool:
        return not (rhs == self)

    def __repr__(self) -> str:
        return "LlmServiceSpecScalingSchedules(%s)" % ", ".join(
            k + "=" + repr(v) for k, v in self._values.items()
        )


__all__ = [
    "InferenceRuntime",
    "InferenceRuntimeProps",
    "InferenceRuntimeSpec",
    "InferenceRuntimeSpecAccelerator",
    "InferenceRuntimeSpecAcceleratorScheduler",
    "InferenceRuntimeSpecAcceleratorSharing",
    "InferenceRuntimeSpecAcceleratorTolerations",
    "InferenceRuntimeSpecAcceleratorTolerationsEffect",
    "InferenceRuntimeSpecAcceleratorTolerationsOperator",
    "InferenceRuntimeSpecContainer",
    "InferenceRuntimeSpecContainerEnv",
    "InferenceRuntimeSpecContainerEnvValueFrom",
    "InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef",
    "InferenceRuntimeSpecContainerEnvValueFromFieldRef",
    "InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef",
    "InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor",
    "InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef",
    "InferenceRuntimeSpecContainerPort",
    "InferenceRuntimeSpecContainerVolumeMounts",
    "InferenceRuntimeSpecContainerVolumes",
    "InferenceRuntimeSpecContainerVolumesConfigMap",
    "InferenceRuntimeSpecContainerVolumesEmptyDir",
    "InferenceRuntimeSpecContainerVolumesEmptyDirMedium",
    "InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit",
    "InferenceRuntimeSpecContainerVolumesHostPath",
    "InferenceRuntimeSpecContainerVolumesHostPathType",
    "InferenceRuntimeSpecContainerVolumesSecret",
    "InferenceRuntimeSpecFamily",
    "InferenceRuntimeSpecHealth",
    "InferenceRuntimeSpecHealthLiveness",
    "InferenceRuntimeSpecHealthLivenessExec",
    "InferenceRuntimeSpecHealthLivenessGrpc",
    "InferenceRuntimeSpecHealthLivenessHttpGet",
    "InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders",
    "InferenceRuntimeSpecHealthLivenessHttpGetPort",
    "InferenceRuntimeSpecHealthLivenessHttpGetScheme",
    "InferenceRuntimeSpecHealthLivenessTcpSocket",
    "InferenceRuntimeSpecHealthLivenessTcpSocketPort",
    "InferenceRuntimeSpecHealthReadiness",
    "InferenceRuntimeSpecHealthReadinessExec",
    "InferenceRuntimeSpecHealthReadinessGrpc",
    "InferenceRuntimeSpecHealthReadinessHttpGet",
    "InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders",
    "InferenceRuntimeSpecHealthReadinessHttpGetPort",
    "InferenceRuntimeSpecHealthReadinessHttpGetScheme",
    "InferenceRuntimeSpecHealthReadinessTcpSocket",
    "InferenceRuntimeSpecHealthReadinessTcpSocketPort",
    "InferenceRuntimeSpecHealthStartup",
    "InferenceRuntimeSpecHealthStartupExec",
    "InferenceRuntimeSpecHealthStartupGrpc",
    "InferenceRuntimeSpecHealthStartupHttpGet",
    "InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders",
    "InferenceRuntimeSpecHealthStartupHttpGetPort",
    "InferenceRuntimeSpecHealthStartupHttpGetScheme",
    "InferenceRuntimeSpecHealthStartupTcpSocket",
    "InferenceRuntimeSpecHealthStartupTcpSocketPort",
    "InferenceRuntimeSpecLifecycle",
    "InferenceRuntimeSpecMetrics",
    "InferenceRuntimeSpecMetricsPort",
    "InferenceRuntimeSpecVendor",
    "LlmService",
    "LlmServiceProps",
    "LlmServiceSpec",
    "LlmServiceSpecCache",
    "LlmServiceSpecCacheSize",
    "LlmServiceSpecCacheStrategy",
    "LlmServiceSpecEndpoint",
    "LlmServiceSpecEndpointAuthentication",
    "LlmServiceSpecEndpointAuthenticationSecretRef",
    "LlmServiceSpecEndpointColdRoutes",
    "LlmServiceSpecEndpointColdRoutesAnswer",
    "LlmServiceSpecEndpointColdStart",
    "LlmServiceSpecEndpointColdStartMode",
    "LlmServiceSpecEndpointResources",
    "LlmServiceSpecEndpointResourcesLimits",
    "LlmServiceSpecEndpointResourcesLimitsCpu",
    "LlmServiceSpecEndpointResourcesLimitsMemory",
    "LlmServiceSpecEndpointResourcesRequests",
    "LlmServiceSpecEndpointResourcesRequestsCpu",
    "LlmServiceSpecEndpointResourcesRequestsMemory",
    "LlmServiceSpecImagePullSecrets",
    "LlmServiceSpecModel",
    "LlmServiceSpecModelSource",
    "LlmServiceSpecModelSourceSecretRef",
    "LlmServiceSpecResources",
    "LlmServiceSpecResourcesCpu",
    "LlmServiceSpecResourcesFraction",
    "LlmServiceSpecResourcesFractionMemory",
    "LlmServiceSpecResourcesMemory",
    "LlmServiceSpecRuntime",
    "LlmServiceSpecRuntimeSelector",
    "LlmServiceSpecRuntimeSelectorVendor",
    "LlmServiceSpecScaling",
    "LlmServiceSpecScalingExternalScaler",
    "LlmServiceSpecScalingExternalScalerTls",
    "LlmServiceSpecScalingExternalScalerTlsAuthenticationRef",
    "LlmServiceSpecScalingExternalScalerTlsAuthenticationRefKind",
    "LlmServiceSpecScalingMetric",
    "LlmServiceSpecScalingSchedules",
]

publication.publish()

def _typecheckingstub__97126898951840ffa155f6c5fe5e640fa66cd642c174b5511ccfc1a9911a6847(
    scope: _constructs_77d1e7e8.Construct,
    id: builtins.str,
    *,
    spec: typing.Union[InferenceRuntimeSpec, typing.Dict[builtins.str, typing.Any]],
    metadata: typing.Optional[typing.Union[_cdk8s_d3d9af27.ApiObjectMetadata, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__e8ceb53e417f22eee4a8fa8efcd115bb15865ffb223d68a3cbf0386a6b32b20c(
    *,
    spec: typing.Union[InferenceRuntimeSpec, typing.Dict[builtins.str, typing.Any]],
    metadata: typing.Optional[typing.Union[_cdk8s_d3d9af27.ApiObjectMetadata, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__987cdabb4c04e2aea2849691fd659e62047b6b69dbe70bb3ec05034aa4a3ca00(
    *,
    container: typing.Union[InferenceRuntimeSpecContainer, typing.Dict[builtins.str, typing.Any]],
    vendor: InferenceRuntimeSpecVendor,
    accelerator: typing.Optional[typing.Union[InferenceRuntimeSpecAccelerator, typing.Dict[builtins.str, typing.Any]]] = None,
    family: typing.Optional[InferenceRuntimeSpecFamily] = None,
    health: typing.Optional[typing.Union[InferenceRuntimeSpecHealth, typing.Dict[builtins.str, typing.Any]]] = None,
    lifecycle: typing.Optional[typing.Union[InferenceRuntimeSpecLifecycle, typing.Dict[builtins.str, typing.Any]]] = None,
    metrics: typing.Optional[typing.Union[InferenceRuntimeSpecMetrics, typing.Dict[builtins.str, typing.Any]]] = None,
    priority: typing.Optional[jsii.Number] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__4ba559d3e4d2aec8fd14351a713de76fcedbccea2ca51c6bd255a235ead93cff(
    *,
    resource_name: builtins.str,
    node_selector: typing.Optional[typing.Mapping[builtins.str, builtins.str]] = None,
    scheduler: typing.Optional[typing.Union[InferenceRuntimeSpecAcceleratorScheduler, typing.Dict[builtins.str, typing.Any]]] = None,
    sharing: typing.Optional[typing.Union[InferenceRuntimeSpecAcceleratorSharing, typing.Dict[builtins.str, typing.Any]]] = None,
    tolerations: typing.Optional[typing.Sequence[typing.Union[InferenceRuntimeSpecAcceleratorTolerations, typing.Dict[builtins.str, typing.Any]]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__650fbbc32259907d6e9fb1f1b894d2e262516240f56792e2fd8243dc559affb8(
    *,
    name: typing.Optional[builtins.str] = None,
    queue: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__4daeb20687baa4328e665631b864f6ffadac6403bce84ecb557906fea2c0b968(
    *,
    supported: typing.Optional[builtins.bool] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__5242bf6dd6c7753b92edecf23f9d816dccbaf13d935a2c3bc96c88d2cdbb82ae(
    *,
    effect: typing.Optional[InferenceRuntimeSpecAcceleratorTolerationsEffect] = None,
    key: typing.Optional[builtins.str] = None,
    operator: typing.Optional[InferenceRuntimeSpecAcceleratorTolerationsOperator] = None,
    toleration_seconds: typing.Optional[jsii.Number] = None,
    value: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__3fe5e8427fafda38d18095d43df981f0ced5a0a2610d4bda62a6444f6a5c01a5(
    *,
    image: builtins.str,
    args: typing.Optional[typing.Sequence[builtins.str]] = None,
    env: typing.Optional[typing.Sequence[typing.Union[InferenceRuntimeSpecContainerEnv, typing.Dict[builtins.str, typing.Any]]]] = None,
    port: typing.Optional[typing.Union[InferenceRuntimeSpecContainerPort, typing.Dict[builtins.str, typing.Any]]] = None,
    volume_mounts: typing.Optional[typing.Sequence[typing.Union[InferenceRuntimeSpecContainerVolumeMounts, typing.Dict[builtins.str, typing.Any]]]] = None,
    volumes: typing.Optional[typing.Sequence[typing.Union[InferenceRuntimeSpecContainerVolumes, typing.Dict[builtins.str, typing.Any]]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__0a02387d13103c3d703fee19813213c02fb75e07d7b7adf8af110bbcc85ec68a(
    *,
    name: builtins.str,
    value: typing.Optional[builtins.str] = None,
    value_from: typing.Optional[typing.Union[InferenceRuntimeSpecContainerEnvValueFrom, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__26b98a4ec7f377a1f16d2cafdd20923fb8b4a21bd132d4e48631d48d7ba0fbe8(
    *,
    config_map_key_ref: typing.Optional[typing.Union[InferenceRuntimeSpecContainerEnvValueFromConfigMapKeyRef, typing.Dict[builtins.str, typing.Any]]] = None,
    field_ref: typing.Optional[typing.Union[InferenceRuntimeSpecContainerEnvValueFromFieldRef, typing.Dict[builtins.str, typing.Any]]] = None,
    resource_field_ref: typing.Optional[typing.Union[InferenceRuntimeSpecContainerEnvValueFromResourceFieldRef, typing.Dict[builtins.str, typing.Any]]] = None,
    secret_key_ref: typing.Optional[typing.Union[InferenceRuntimeSpecContainerEnvValueFromSecretKeyRef, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__d9254581dd43d9a21eb7da4056dafc9381833f7725366429db94fffeab22b625(
    *,
    key: builtins.str,
    name: builtins.str,
    optional: typing.Optional[builtins.bool] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__8ef6528df7f49123b2bf8129ff9db76f50f5babcf4fb7de85dacdb17287d7f2b(
    *,
    field_path: builtins.str,
    api_version: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__f0ec87091c19072c178535a597e4194a89c70aec83e9787183807bfaf249814d(
    *,
    resource: builtins.str,
    container_name: typing.Optional[builtins.str] = None,
    divisor: typing.Optional[InferenceRuntimeSpecContainerEnvValueFromResourceFieldRefDivisor] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__69f329b8988abbf9860e7b663166f422c05dfde80e30073d88992ef0e81192b6(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__c16186c3590c5878b8d4517e7dae3d8e5735ef3d6ef0b9e3a4b6c76202e8a76e(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__519bde725df4789c0424fc0a6e2c8327794f67d369e8cfe013e33131721114a9(
    *,
    key: builtins.str,
    name: builtins.str,
    optional: typing.Optional[builtins.bool] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__e1a90c4e731d55bf5ae1c60500942539b961c8acecaa2f198ffbbcdf3983809e(
    *,
    container_port: typing.Optional[jsii.Number] = None,
    name: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__f67154c5b70e3f8699594e5e4e0063674f0560a3e93d0ce7ba648ea45971a8b1(
    *,
    mount_path: builtins.str,
    name: builtins.str,
    read_only: typing.Optional[builtins.bool] = None,
    sub_path: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__776e50e9d1f96d4205a49febd19738b0e75bead65d7d88db39c4d3a65a1db38c(
    *,
    name: builtins.str,
    config_map: typing.Optional[typing.Union[InferenceRuntimeSpecContainerVolumesConfigMap, typing.Dict[builtins.str, typing.Any]]] = None,
    empty_dir: typing.Optional[typing.Union[InferenceRuntimeSpecContainerVolumesEmptyDir, typing.Dict[builtins.str, typing.Any]]] = None,
    host_path: typing.Optional[typing.Union[InferenceRuntimeSpecContainerVolumesHostPath, typing.Dict[builtins.str, typing.Any]]] = None,
    secret: typing.Optional[typing.Union[InferenceRuntimeSpecContainerVolumesSecret, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__981805802a8abe5dd8036d90af933067128698fb521f43b4bd8d5181a9699b9e(
    *,
    name: builtins.str,
    optional: typing.Optional[builtins.bool] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__84011130bb1242d8bc184d7ab0b8c5b079f681afca60cc3cd934685de4d57012(
    *,
    medium: typing.Optional[InferenceRuntimeSpecContainerVolumesEmptyDirMedium] = None,
    size_limit: typing.Optional[InferenceRuntimeSpecContainerVolumesEmptyDirSizeLimit] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__81c7511966f5c4927a7193f528b048cad54abe9f4aaa20522ce37f8b170541c7(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__9d7dad9de2590ad6d2997fda4c257fcf12f5e2534c3ed16aa19d252efd191231(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__d349511647f8c1284b74cf82ba884902321f4c16fbe77537cf022aafd2927882(
    *,
    path: builtins.str,
    type: typing.Optional[InferenceRuntimeSpecContainerVolumesHostPathType] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__d4ac6ed8b7f2029269d9bc1ef705be63695dcf942099b92a2f62fa2bc021460a(
    *,
    secret_name: builtins.str,
    optional: typing.Optional[builtins.bool] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__49dfab2c4c96b5d81d80523d7bf5ce54967ae706bf393b40c3e261d937a41db3(
    *,
    liveness: typing.Optional[typing.Union[InferenceRuntimeSpecHealthLiveness, typing.Dict[builtins.str, typing.Any]]] = None,
    readiness: typing.Optional[typing.Union[InferenceRuntimeSpecHealthReadiness, typing.Dict[builtins.str, typing.Any]]] = None,
    startup: typing.Optional[typing.Union[InferenceRuntimeSpecHealthStartup, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__bc1a90d3d97ba7a048ec1941e6d70ebe28a1a36c7c34178bf1661bca6763fb3a(
    *,
    exec: typing.Optional[typing.Union[InferenceRuntimeSpecHealthLivenessExec, typing.Dict[builtins.str, typing.Any]]] = None,
    failure_threshold: typing.Optional[jsii.Number] = None,
    grpc: typing.Optional[typing.Union[InferenceRuntimeSpecHealthLivenessGrpc, typing.Dict[builtins.str, typing.Any]]] = None,
    http_get: typing.Optional[typing.Union[InferenceRuntimeSpecHealthLivenessHttpGet, typing.Dict[builtins.str, typing.Any]]] = None,
    initial_delay_seconds: typing.Optional[jsii.Number] = None,
    period_seconds: typing.Optional[jsii.Number] = None,
    success_threshold: typing.Optional[jsii.Number] = None,
    tcp_socket: typing.Optional[typing.Union[InferenceRuntimeSpecHealthLivenessTcpSocket, typing.Dict[builtins.str, typing.Any]]] = None,
    termination_grace_period_seconds: typing.Optional[jsii.Number] = None,
    timeout_seconds: typing.Optional[jsii.Number] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__6f3210a6c2d9856fa391fcdb7fbca23f946d1fd3f6cc74acc6dac308d0f82845(
    *,
    command: typing.Sequence[builtins.str],
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__79efb1aa1959746fb962d9f10c07690d21e9943bc0b1baf1f2d836d7be57bb0e(
    *,
    port: jsii.Number,
    service: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__22150bcb88ca1490056dfb32cf5c281045fdbc8a31dc968a1355b85b2d16e1e2(
    *,
    port: InferenceRuntimeSpecHealthLivenessHttpGetPort,
    host: typing.Optional[builtins.str] = None,
    http_headers: typing.Optional[typing.Sequence[typing.Union[InferenceRuntimeSpecHealthLivenessHttpGetHttpHeaders, typing.Dict[builtins.str, typing.Any]]]] = None,
    path: typing.Optional[builtins.str] = None,
    scheme: typing.Optional[InferenceRuntimeSpecHealthLivenessHttpGetScheme] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__9972239e85a27abbf3d42ac23c8e96d67becc2774695ebac2b1c9e68aa414367(
    *,
    name: builtins.str,
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__599e315c0c611f3da58d2115e3e2a527e83776aae2bbf41482c49465285c8d62(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__fb27cc27f8979034edc9e0c4fbe4c90e35942fc3c6f8b5beec299fe71b4eba2a(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__3c910607916a470695b9ed2dc4bf12d606e9bbc8c48c7ffbae1e32e8fd9b5865(
    *,
    port: InferenceRuntimeSpecHealthLivenessTcpSocketPort,
    host: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__fa6bca4c94c4a12b9b5bb3b20e43f7a843155b9cbc25aff590b8c2f01ed10412(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__0f57a5519f055f18f3595590516c78bc68710862a1dedf55d7ae33047adbdebf(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__a00eccf01838a7af17437b497b791f835c03477dce68d6796cccdc3bd3d29f21(
    *,
    exec: typing.Optional[typing.Union[InferenceRuntimeSpecHealthReadinessExec, typing.Dict[builtins.str, typing.Any]]] = None,
    failure_threshold: typing.Optional[jsii.Number] = None,
    grpc: typing.Optional[typing.Union[InferenceRuntimeSpecHealthReadinessGrpc, typing.Dict[builtins.str, typing.Any]]] = None,
    http_get: typing.Optional[typing.Union[InferenceRuntimeSpecHealthReadinessHttpGet, typing.Dict[builtins.str, typing.Any]]] = None,
    initial_delay_seconds: typing.Optional[jsii.Number] = None,
    period_seconds: typing.Optional[jsii.Number] = None,
    success_threshold: typing.Optional[jsii.Number] = None,
    tcp_socket: typing.Optional[typing.Union[InferenceRuntimeSpecHealthReadinessTcpSocket, typing.Dict[builtins.str, typing.Any]]] = None,
    termination_grace_period_seconds: typing.Optional[jsii.Number] = None,
    timeout_seconds: typing.Optional[jsii.Number] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__1f0341f08bda43d9d4e15fc55b53b2c75c9b10fb828f5a8e256f60db86bbdebc(
    *,
    command: typing.Sequence[builtins.str],
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__32e867df76205be9e2dd9811153854119123781eaab48cc0cd79364ad183dd14(
    *,
    port: jsii.Number,
    service: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__46da06a776f68e78ce15bcc924c774b26b0c902f6f24d43b9b4a82fcc06a6659(
    *,
    port: InferenceRuntimeSpecHealthReadinessHttpGetPort,
    host: typing.Optional[builtins.str] = None,
    http_headers: typing.Optional[typing.Sequence[typing.Union[InferenceRuntimeSpecHealthReadinessHttpGetHttpHeaders, typing.Dict[builtins.str, typing.Any]]]] = None,
    path: typing.Optional[builtins.str] = None,
    scheme: typing.Optional[InferenceRuntimeSpecHealthReadinessHttpGetScheme] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__17fc816d26faad968c733503548c0d89e10482ee900470e4f27d3c863a8aca6b(
    *,
    name: builtins.str,
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__7bf67546a9ca4cacbc2677b3f00b941f95aa5978e4169a0368c74a576326293b(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__a916b53000266765cffca12fd249d3078e596a835b0a871935617999a92d3c01(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__ffbb18fbe3da45c9246b9e2930a42e70a600b4af13980e26f6536570d49f7e35(
    *,
    port: InferenceRuntimeSpecHealthReadinessTcpSocketPort,
    host: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__7cc7fb4993e49122420571166f5939cd2e67661078212623e4113e193eac46f9(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__b4e56589f5d02d2a8b05fc45ab87f15ee39f34b24a207392bbfd30d9ddd84a7c(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__b6d0bcaf020d53c9b9e805958ed33b44229697204c44a8be828d9ac377e36415(
    *,
    exec: typing.Optional[typing.Union[InferenceRuntimeSpecHealthStartupExec, typing.Dict[builtins.str, typing.Any]]] = None,
    failure_threshold: typing.Optional[jsii.Number] = None,
    grpc: typing.Optional[typing.Union[InferenceRuntimeSpecHealthStartupGrpc, typing.Dict[builtins.str, typing.Any]]] = None,
    http_get: typing.Optional[typing.Union[InferenceRuntimeSpecHealthStartupHttpGet, typing.Dict[builtins.str, typing.Any]]] = None,
    initial_delay_seconds: typing.Optional[jsii.Number] = None,
    period_seconds: typing.Optional[jsii.Number] = None,
    success_threshold: typing.Optional[jsii.Number] = None,
    tcp_socket: typing.Optional[typing.Union[InferenceRuntimeSpecHealthStartupTcpSocket, typing.Dict[builtins.str, typing.Any]]] = None,
    termination_grace_period_seconds: typing.Optional[jsii.Number] = None,
    timeout_seconds: typing.Optional[jsii.Number] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__156ad9d01a9cd9002ad042273044e25b0f0c5971c77313f39a28a118991bcf97(
    *,
    command: typing.Sequence[builtins.str],
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__4270c0e5d66bbd160b7e131c1bdc42d61092302668fe3d834cf4a784122912f4(
    *,
    port: jsii.Number,
    service: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__b37e8b337f2d34fe6a2695edbfc3c52e67e95eb2a371943f1ebf81ace74004eb(
    *,
    port: InferenceRuntimeSpecHealthStartupHttpGetPort,
    host: typing.Optional[builtins.str] = None,
    http_headers: typing.Optional[typing.Sequence[typing.Union[InferenceRuntimeSpecHealthStartupHttpGetHttpHeaders, typing.Dict[builtins.str, typing.Any]]]] = None,
    path: typing.Optional[builtins.str] = None,
    scheme: typing.Optional[InferenceRuntimeSpecHealthStartupHttpGetScheme] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__43369221f7add4aa310cee3c539e29b669e4e22268ac99da957dec69bb5c67f1(
    *,
    name: builtins.str,
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__fb447738480118fd14d1c97dbad91e09767b5ccaa6eaacb96a4e97a5c3de86fa(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__00af674dc3780db2ca886e7b67662325c670e2cfaed0fd2eb5bba99f4086969f(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__c64bfe5c700cdaf8bf035ddf665a8cc27a08a46e7a960043f322e4d6b3c9291c(
    *,
    port: InferenceRuntimeSpecHealthStartupTcpSocketPort,
    host: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__0c5b0c7c1fc6b7b5cde1bc038b72fe37d66935f8b2b2e923326fbe334f192e90(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__55c283ce1ad08df778990a44dfbda129aa2218976a25ffd2346d3e103938e175(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__0c7f8f5512be40f5184bb5a27af9d27f28e693eb6d3c0e18ca43068fbaff2c35(
    *,
    pre_stop_drain: typing.Optional[builtins.bool] = None,
    termination_grace_period_seconds: typing.Optional[jsii.Number] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__e6d8db49910abb880c12388b4e0b280e7d13bb0e214ea316a6ceca32296da184(
    *,
    queue_depth: builtins.str,
    kv_cache_util: typing.Optional[builtins.str] = None,
    path: typing.Optional[builtins.str] = None,
    port: typing.Optional[InferenceRuntimeSpecMetricsPort] = None,
    running: typing.Optional[builtins.str] = None,
    ttft: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__83bdcc6218d4d783e416132e5bed55e23887cd2ee134aa0bfeeef12dfc9265f1(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__8cdaea4496afc1bfe9261b4d44d302ada0781b2a6e4fbcfaa2fe42a5ebfd2c67(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__a30c2db1cbbcda0e0c0a8d62efb26e36c0393d11ee3d418a8c96a95bc4e7cc57(
    scope: _constructs_77d1e7e8.Construct,
    id: builtins.str,
    *,
    spec: typing.Union[LlmServiceSpec, typing.Dict[builtins.str, typing.Any]],
    metadata: typing.Optional[typing.Union[_cdk8s_d3d9af27.ApiObjectMetadata, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__f96388ec956758fad4926c415b21c8816d294aaf8d1d02b7922012ea5e666e7a(
    *,
    spec: typing.Union[LlmServiceSpec, typing.Dict[builtins.str, typing.Any]],
    metadata: typing.Optional[typing.Union[_cdk8s_d3d9af27.ApiObjectMetadata, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__276fd87c323d358e5892d68008bd9bf9108fcc09691fccac48b50814938d6698(
    *,
    model: typing.Union[LlmServiceSpecModel, typing.Dict[builtins.str, typing.Any]],
    runtime: typing.Union[LlmServiceSpecRuntime, typing.Dict[builtins.str, typing.Any]],
    cache: typing.Optional[typing.Union[LlmServiceSpecCache, typing.Dict[builtins.str, typing.Any]]] = None,
    endpoint: typing.Optional[typing.Union[LlmServiceSpecEndpoint, typing.Dict[builtins.str, typing.Any]]] = None,
    image_pull_secrets: typing.Optional[typing.Sequence[typing.Union[LlmServiceSpecImagePullSecrets, typing.Dict[builtins.str, typing.Any]]]] = None,
    resources: typing.Optional[typing.Union[LlmServiceSpecResources, typing.Dict[builtins.str, typing.Any]]] = None,
    scaling: typing.Optional[typing.Union[LlmServiceSpecScaling, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__6f78902b5f52e4bef47d96cc159d18480f65a6508ab4fcf4b5e166a876f7c12e(
    *,
    prewarm: typing.Optional[builtins.bool] = None,
    size: typing.Optional[LlmServiceSpecCacheSize] = None,
    storage_class_name: typing.Optional[builtins.str] = None,
    strategy: typing.Optional[LlmServiceSpecCacheStrategy] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__b717cfdb842405842990b0ea7cf20c7c7a9c442755da6817f349e04a7fbbe379(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__8cb001c9ae3a5c7fdd0693eb220dfcd455df2aed924051847ca1fc93c67d02ce(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__bb942df7183590492b6e60f40b1b1d4a737f460ee171c53dd4fb23b1412dff78(
    *,
    authentication: typing.Optional[typing.Union[LlmServiceSpecEndpointAuthentication, typing.Dict[builtins.str, typing.Any]]] = None,
    cold_routes: typing.Optional[typing.Sequence[typing.Union[LlmServiceSpecEndpointColdRoutes, typing.Dict[builtins.str, typing.Any]]]] = None,
    cold_start: typing.Optional[typing.Union[LlmServiceSpecEndpointColdStart, typing.Dict[builtins.str, typing.Any]]] = None,
    forward_authorization: typing.Optional[builtins.bool] = None,
    max_connections: typing.Optional[jsii.Number] = None,
    max_queue: typing.Optional[jsii.Number] = None,
    max_queued_body_bytes: typing.Optional[jsii.Number] = None,
    open_ai_compatible: typing.Optional[builtins.bool] = None,
    replicas: typing.Optional[jsii.Number] = None,
    resources: typing.Optional[typing.Union[LlmServiceSpecEndpointResources, typing.Dict[builtins.str, typing.Any]]] = None,
    served_model_name: typing.Optional[builtins.str] = None,
    websocket_max_message_bytes: typing.Optional[jsii.Number] = None,
    websocket_max_open: typing.Optional[jsii.Number] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__d3d8aa1ca2697cedb3209092b2e1fe6e8267dee05e0826e9f51cc74dd177ac7b(
    *,
    secret_ref: typing.Union[LlmServiceSpecEndpointAuthenticationSecretRef, typing.Dict[builtins.str, typing.Any]],
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__7de2ba151a9f08c0d1950825ca8c236ccf11967d480b7603fb8a0fe702f641b3(
    *,
    key: builtins.str,
    name: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__01fd29c46bdb70ef42e8f638293d736a64c202601aad3f36cd7832407fc92c9a(
    *,
    path: builtins.str,
    answer: typing.Optional[LlmServiceSpecEndpointColdRoutesAnswer] = None,
    status: typing.Optional[jsii.Number] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__99901380ab43ad95bc70e6917eabc172f99e43ffe4055ce1214eafc7e75e44d6(
    *,
    heartbeat_interval: typing.Optional[builtins.str] = None,
    mode: typing.Optional[LlmServiceSpecEndpointColdStartMode] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__c4ac46ee02c877d7c47dbeb22aa6f7885efd4e1e8b5ba21c1a6138c584193be0(
    *,
    limits: typing.Optional[typing.Union[LlmServiceSpecEndpointResourcesLimits, typing.Dict[builtins.str, typing.Any]]] = None,
    requests: typing.Optional[typing.Union[LlmServiceSpecEndpointResourcesRequests, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__9688083f9c8b5a60d666c16221a66281d1bbd3367e35eaca30a12cbd3bf0e280(
    *,
    cpu: typing.Optional[LlmServiceSpecEndpointResourcesLimitsCpu] = None,
    memory: typing.Optional[LlmServiceSpecEndpointResourcesLimitsMemory] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__df99deb1afa853992defa40069e0b694164a8d4a180b74d0e8136d45cb79f8a1(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__cb164782a93655fc1261caac68e136a66d2ca537413f36c8a56824d26fc154bb(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__152436855cec56a852704784163191f36aeed90633b9e49d3cbfbdb65a43c94e(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__0396ee8872e53bdc423e42752abef81f1ceca1ed96621d37e81bfd57710bd288(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__da0897ea886c57559b610cce96a7e3e1ba37686d52c4830779acf369cec3b2a6(
    *,
    cpu: typing.Optional[LlmServiceSpecEndpointResourcesRequestsCpu] = None,
    memory: typing.Optional[LlmServiceSpecEndpointResourcesRequestsMemory] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__80afffbfa1f74bc46fee24ffdedfd31ebeff5ec6cc3d93435c00ee78267b6804(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__5717d156e68b6af7a1253b068616e4691a84274b8fc55b1abb5366e82b1fe720(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__4b554a43ddd7c2eed2ebd95c5ecac877335c0db9746e14149b94e47296f44b36(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__72c321ac05b17ccd7950c1c2de1d166ae4e875a5d6c9baad03c9138f49a74d00(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__5d618aa125bdb422a3050d63f43570f647ce11208adf0204088e6277294d8df8(
    *,
    name: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__88803644bbc3350e4e38e31e5cf047331fd23613eba27d74ddcfd5d517826951(
    *,
    catalog_ref: typing.Optional[builtins.str] = None,
    source: typing.Optional[typing.Union[LlmServiceSpecModelSource, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__f58db08a144c5c85dcc24d56624474d826eea5fb77eb4aa3ef13b93032a32758(
    *,
    uri: builtins.str,
    secret_ref: typing.Optional[typing.Union[LlmServiceSpecModelSourceSecretRef, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__07e9954f4013b737d4d48ef4420516ce657e4d9dd45c5dc730886193a1b5f34c(
    *,
    name: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__387a3d09896aa08c6cda73bde9430f57415104e644bda306be344c06f0c58063(
    *,
    accelerators: typing.Optional[jsii.Number] = None,
    cpu: typing.Optional[LlmServiceSpecResourcesCpu] = None,
    fraction: typing.Optional[typing.Union[LlmServiceSpecResourcesFraction, typing.Dict[builtins.str, typing.Any]]] = None,
    memory: typing.Optional[LlmServiceSpecResourcesMemory] = None,
    shared_memory: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__c69232c1bff883dabf0c7d22ad1f25c279bdd30cb03e7279a5de29a3a575adee(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__0605f97e8aa3fbdfc0680b5ae547958d99e04dff5d5c95d6048fe79c2077fa57(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__4723c48fa3bbfd5f9952c44e584a0f3c6569f050897236b9de6b13c2f06c1b18(
    *,
    cores: typing.Optional[jsii.Number] = None,
    memory: typing.Optional[LlmServiceSpecResourcesFractionMemory] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__efb676a31257b8020fda82c19a8a01b88695856fe8ff6bedc5ee40fce6088c17(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__d53acf7ce5d06ae36fccf4791dc5f60a213e6dec96241c1978f8fe838f3c3bc6(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__0cd8c63f5c1bdb9a90bec3b8297ea9f792de5de11b062b72f9614805641c416f(
    value: jsii.Number,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__e1bc4817cb19692c808e7193ca284cb06197328919a65547a8b4b8e49abd0512(
    value: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__4a43893ce1ee929b794dbbf1cfcf1ddb86ebd865a99d28fbb0b6d375f74a6286(
    *,
    args_override: typing.Optional[typing.Sequence[builtins.str]] = None,
    name: typing.Optional[builtins.str] = None,
    selector: typing.Optional[typing.Union[LlmServiceSpecRuntimeSelector, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__38fe96b00bf2b2616cc94b7cccafcb5704370b4fa1e34b0509193aff7a94f220(
    *,
    vendor: typing.Sequence[LlmServiceSpecRuntimeSelectorVendor],
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__a7fc0446fb6442e22f813cd691cd11cdbc086898b3b1a9c8e836e26abd328dde(
    *,
    activation_timeout: typing.Optional[builtins.str] = None,
    drain_timeout: typing.Optional[builtins.str] = None,
    external_scaler: typing.Optional[typing.Union[LlmServiceSpecScalingExternalScaler, typing.Dict[builtins.str, typing.Any]]] = None,
    max: typing.Optional[jsii.Number] = None,
    metric: typing.Optional[LlmServiceSpecScalingMetric] = None,
    min: typing.Optional[jsii.Number] = None,
    scale_down_stabilization: typing.Optional[builtins.str] = None,
    schedules: typing.Optional[typing.Sequence[typing.Union[LlmServiceSpecScalingSchedules, typing.Dict[builtins.str, typing.Any]]]] = None,
    target: typing.Optional[jsii.Number] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__b796b75b466bcfc8a0e74e339f42e5f1069d65bb27cbb722912f3980e083ab04(
    *,
    tls: typing.Optional[typing.Union[LlmServiceSpecScalingExternalScalerTls, typing.Dict[builtins.str, typing.Any]]] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__e3dec3c21bf91074eea92a682454a6bf41fcb58383adfa1921fc4feb37e1e366(
    *,
    authentication_ref: typing.Union[LlmServiceSpecScalingExternalScalerTlsAuthenticationRef, typing.Dict[builtins.str, typing.Any]],
    server_secret_name: builtins.str,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__990116bafc44b13d11a37bf27e76cd6cefc4753cb8c0545454df18543080dc77(
    *,
    name: builtins.str,
    kind: typing.Optional[LlmServiceSpecScalingExternalScalerTlsAuthenticationRefKind] = None,
) -> None:
    """Type checking stubs"""
    pass

def _typecheckingstub__bd30f0c167c929e5b29e45aa79b6a6c57c03d7d5932116175d308ccc164682a3(
    *,
    name: builtins.str,
    start: builtins.str,
    duration: typing.Optional[builtins.str] = None,
    end: typing.Optional[builtins.str] = None,
    min_replicas: typing.Optional[jsii.Number] = None,
    timezone: typing.Optional[builtins.str] = None,
) -> None:
    """Type checking stubs"""
    pass
