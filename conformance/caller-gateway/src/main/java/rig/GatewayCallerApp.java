package rig;

import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.gateway.config.HttpClientProperties;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.cloud.gateway.route.builder.RouteLocatorBuilder;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Spring Cloud Gateway caller (2025.1.4): the gateway (spring-cloud-starter-gateway-server-webflux)
 * serves on its own port with ONE route, Path=/svc/** -> lb://svc (StripPrefix=1), no Retry
 * filter, every gateway setting at its default except the HTTP client's connection pool to the
 * services (pool type DISABLED, so every proxied request opens a new TCP connection, as the other
 * rig callers do). An in-process driver sends, every period-ms on a pool thread, one
 * GET /svc/ping to the gateway's own port (127.0.0.1, a new connection each time) and logs the
 * gateway's answer: 200 -> ok, anything else -> http_<code> (a refused service connection comes
 * back as a 5xx from the gateway; no instance -> the load-balancer filter's 503 before any
 * instance was chosen -> no_instance).
 *
 * Chosen instance: a GlobalFilter ordered right after ReactiveLoadBalancerClientFilter reads the
 * load balancer's Response<ServiceInstance> from the exchange attribute
 * GATEWAY_LOADBALANCER_RESPONSE_ATTR (set by that filter, the instance the request is really
 * routed to) and files it under the driver's X-Rig-Seq request header; the driver takes it back
 * when the answer arrives, so a failed request is logged with the instance it went to.
 */
@SpringBootApplication
public class GatewayCallerApp implements ApplicationRunner {
    private static final Logger log = LoggerFactory.getLogger(GatewayCallerApp.class);
    static final String SEQ = "X-Rig-Seq";
    /** X-Rig-Seq -> instance id chosen by ReactiveLoadBalancerClientFilter. */
    static final Map<String, String> CHOSEN = new ConcurrentHashMap<>();

    private final ApplicationContext ctx;
    private final Environment env;
    private final AtomicLong seq = new AtomicLong();

    @Value("${caller.log-file:caller.csv}") String logFile;
    @Value("${caller.period-ms:50}") long periodMs;
    @Value("${caller.service-id:svc}") String serviceId;
    @Value("${caller.connect-timeout-ms:500}") int connectTimeoutMs;
    /** Driver -> gateway read time-out: long, so the gateway's own answer is what gets logged. */
    @Value("${caller.gateway-read-timeout-ms:10000}") int readTimeoutMs;
    @Value("${caller.pool-size:64}") int poolSize;

    private RigLog out;
    private String base;

    public GatewayCallerApp(ApplicationContext ctx, Environment env) {
        this.ctx = ctx;
        this.env = env;
    }

    public static void main(String[] args) {
        // The driver's connections to the gateway: a new TCP connection per request.
        System.setProperty("http.keepAlive", "false");
        SpringApplication.run(GatewayCallerApp.class, args);
    }

    @Bean
    RouteLocator rigRoutes(RouteLocatorBuilder builder, @Value("${caller.service-id:svc}") String serviceId) {
        return builder.routes()
                .route(serviceId, r -> r.path("/" + serviceId + "/**").filters(f -> f.stripPrefix(1))
                        .uri("lb://" + serviceId))
                .build();
    }

    @Bean
    GlobalFilter noteChosenInstance() {
        return new NoteChosenInstance();
    }

    /** Runs after ReactiveLoadBalancerClientFilter (order 10150): records the instance it chose. */
    static final class NoteChosenInstance implements GlobalFilter, Ordered {
        @Override
        public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
            Response<ServiceInstance> lb = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_LOADBALANCER_RESPONSE_ATTR);
            String s = exchange.getRequest().getHeaders().getFirst(SEQ);
            if (s != null && lb != null && lb.hasServer()) {
                CHOSEN.put(s, lb.getServer().getInstanceId());
            }
            return chain.filter(exchange);
        }

        @Override
        public int getOrder() {
            return ReactiveLoadBalancerClientFilter.LOAD_BALANCER_CLIENT_FILTER_ORDER + 1;
        }
    }

    @Override
    public void run(ApplicationArguments args) throws Exception {
        describe();
        base = "http://127.0.0.1:" + env.getProperty("local.server.port") + "/" + serviceId + "/ping";
        ExecutorService pool = Executors.newFixedThreadPool(poolSize, r -> {
            Thread t = new Thread(r, "rig-req");
            t.setDaemon(true);
            return t;
        });
        ScheduledExecutorService sched = Executors.newScheduledThreadPool(2);
        out = new RigLog(logFile, sched);
        sched.scheduleAtFixedRate(() -> pool.execute(this::oneRequest), 0, periodMs, TimeUnit.MILLISECONDS);
        log.info("RIG caller started: period={}ms url={} log={}", periodMs, base, logFile);
    }

    /** The RIG line: the gateway's global filters in order, the retry question, the HTTP client pool. */
    private void describe() {
        Map<Integer, String> filters = new TreeMap<>();
        ctx.getBeansOfType(GlobalFilter.class).values().forEach(f -> filters.merge(
                f instanceof Ordered ? ((Ordered) f).getOrder() : 0, f.getClass().getName(), (a, b) -> a + "+" + b));
        HttpClientProperties hc = ctx.getBean(HttpClientProperties.class);
        log.info("RIG gateway route {} -> lb://{} globalFilters={} spring-retry present={} retryFilterOnRoute=false "
                        + "httpclient.pool.type={} connectTimeout={} responseTimeout={} lbCacheManager={}",
                "/" + serviceId + "/**", serviceId, filters,
                ClassUtils.isPresent("org.springframework.retry.support.RetryTemplate", null),
                hc.getPool().getType(), hc.getConnectTimeout(), hc.getResponseTimeout(),
                ctx.getBeanNamesForType(org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager.class).length == 0
                        ? "NONE" : ctx.getBean(org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager.class).getClass().getName());
    }

    private void oneRequest() {
        long send = System.currentTimeMillis();
        long t0 = System.nanoTime();
        String s = Long.toString(seq.incrementAndGet());
        String outcome;
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create(base).toURL().openConnection();
            c.setConnectTimeout(connectTimeoutMs);
            c.setReadTimeout(readTimeoutMs);
            c.setUseCaches(false);
            c.setRequestProperty(SEQ, s);
            try {
                int code = c.getResponseCode();
                InputStream is = code < 400 ? c.getInputStream() : c.getErrorStream();
                if (is != null) {
                    is.readAllBytes();
                    is.close();
                }
                outcome = code == 200 ? "ok"
                        : code == 503 && !CHOSEN.containsKey(s) ? "no_instance" : "http_" + code;
            } finally {
                c.disconnect();
            }
        } catch (Throwable e) {
            outcome = RigLog.failure(e);
        }
        String chosen = CHOSEN.remove(s);
        long lat = (System.nanoTime() - t0) / 1_000_000L;
        out.write(send, chosen, outcome, lat);
    }
}
